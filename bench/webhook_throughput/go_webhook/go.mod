module graintune.dev/bench/gowebhook

go 1.21
