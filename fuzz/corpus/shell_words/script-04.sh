echo 'start: grain tuning'
python3 -m MaxText.train MaxText/configs/base.yml run_name="my run" 'grain_worker_count=-1' \
  steps=5
echo end
