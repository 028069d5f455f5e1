echo a && python3 -m MaxText.train cfg.yml x=1;y=2
z='a b'