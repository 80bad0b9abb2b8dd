package main

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// auditPolicy logs what taintcheck's import reads (IMPORT-4, IMPORT-5): pods and nodes with
// their bodies, a pod's binding (its instant dates the bind, IMPORT-2), Events with the request
// body, nothing else. RequestReceived is omitted: import
// reads ResponseComplete entries only, and real clusters commonly omit it too.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: RequestResponse
  resources:
  - group: ""
    resources: ["pods", "pods/status", "pods/binding", "nodes", "nodes/status"]
- level: Request
  resources:
  - group: ""
    resources: ["events"]
  - group: "events.k8s.io"
    resources: ["events"]
- level: None
`

// writeAuth writes the static token file giving the admin identity (group system:masters), or
// keeps the token of an earlier start in dir, so that kubeconfigs written then stay valid.
func writeAuth(dir string) (token, tokenFile string, err error) {
	tokenFile = filepath.Join(dir, "tokens.csv")
	if kept, err := os.ReadFile(filepath.Join(dir, "token")); err == nil {
		if _, err := os.Stat(tokenFile); err == nil {
			return strings.TrimSpace(string(kept)), tokenFile, nil
		}
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", "", err
	}
	token = hex.EncodeToString(b)
	line := fmt.Sprintf("%s,admin,admin-uid,\"system:masters\"\n", token)
	if err := os.WriteFile(tokenFile, []byte(line), 0o600); err != nil {
		return "", "", err
	}
	return token, tokenFile, os.WriteFile(filepath.Join(dir, "token"), []byte(token+"\n"), 0o600)
}

// writeKubeconfig writes dir/kubeconfig for the admin identity, atomically (a reader never
// sees half a file).
func writeKubeconfig(dir, server string, caPEM []byte, token string) error {
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: taintcheck
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: admin
  user:
    token: %s
contexts:
- name: taintcheck
  context:
    cluster: taintcheck
    user: admin
current-context: taintcheck
`, server, base64.StdEncoding.EncodeToString(caPEM), token)
	return writeAtomic(filepath.Join(dir, "kubeconfig"), []byte(cfg))
}

func writeAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
