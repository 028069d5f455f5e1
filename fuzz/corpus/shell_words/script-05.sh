echo XPK Start: $(date);
_sigterm() (kill -SIGTERM $! 2>/dev/null;);
trap _sigterm SIGTERM;
(export TPU_STDERR_LOG_LEVEL=0 && python3 -m MaxText.train MaxText/configs/base.yml run_name=llama3-8b-v6e-32 model_name=llama3-8b base_output_directory=gs://example-bucket/runs dataset_type=grain grain_file_type=arrayrecord grain_train_files=/data/c4-en-raw/*.array_record tokenizer_path=assets/tokenizer_llama3.tiktoken per_device_batch_size=2 max_target_length=8192 steps=2000 grain_worker_count=-1 enable_checkpointing=false) & PID=$!;
while kill -0 $PID 2>/dev/null; do sleep 5; done;
wait $PID;
EXIT_CODE=$?;
echo XPK End: $(date);
echo EXIT_CODE=$EXIT_CODE;
exit $EXIT_CODE
