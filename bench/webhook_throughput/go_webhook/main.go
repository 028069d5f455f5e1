// The baseline graintune's admission path is compared against: a minimal Go net/http webhook
// (standard library only) that decodes each AdmissionReview and answers "allowed", as the
// smallest Go mutating webhook a platform team would otherwise run.
package main

import (
	"encoding/json"
	"flag"
	"log"
	"net/http"
)

type review struct {
	APIVersion string                 `json:"apiVersion"`
	Kind       string                 `json:"kind"`
	Request    map[string]interface{} `json:"request"`
}

func main() {
	addr := flag.String("addr", "127.0.0.1:9444", "listen address")
	cert := flag.String("cert", "", "TLS certificate")
	key := flag.String("key", "", "TLS key")
	flag.Parse()
	http.HandleFunc("/mutate", func(w http.ResponseWriter, r *http.Request) {
		var in review
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		uid, _ := in.Request["uid"].(string)
		out := map[string]interface{}{
			"apiVersion": "admission.k8s.io/v1",
			"kind":       "AdmissionReview",
			"response":   map[string]interface{}{"uid": uid, "allowed": true},
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(out)
	})
	log.Fatal(http.ListenAndServeTLS(*addr, *cert, *key, nil))
}
