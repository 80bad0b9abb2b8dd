// Command controlplane runs a real kube-apiserver with an embedded etcd on 127.0.0.1, with
// serving TLS, RBAC, the release's default admission plugins and an audit log, for taintcheck's
// tests of upstream controllers. Usage: controlplane --dir DIR [--port N] [--feature-gates G]
// [--apiserver-arg=--flag=value ...]. Files in DIR: kubeconfig, ca.crt, token, audit.log,
// controlplane.log, etcd/, and ready once /readyz answers 200; stdout gets one line
// "ready https://127.0.0.1:PORT". A second start in the same DIR with the first one's --port is
// that server restarted: etcd's data, the certificates and the token are kept, the audit log is
// appended to.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

// stringList is a repeatable flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, " ") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// userErr is the original stderr: fd 2 itself is redirected to DIR/controlplane.log.
var userErr = os.Stderr

func fail(code int, format string, args ...any) {
	fmt.Fprintf(userErr, "controlplane: "+format+"\n", args...)
	os.Exit(code)
}

func main() {
	fs := flag.NewFlagSet("controlplane", flag.ContinueOnError)
	dir := fs.String("dir", "", "directory for etcd data, certificates, kubeconfig, logs (required)")
	port := fs.Int("port", 0, "kube-apiserver secure port on 127.0.0.1 (0: a free port)")
	gates := fs.String("feature-gates", "", "kube-apiserver --feature-gates, e.g. TaintTolerationComparisonOperators=true")
	timeout := fs.Duration("ready-timeout", 180*time.Second, "give up when /readyz has not answered 200 by then")
	var extra stringList
	fs.Var(&extra, "apiserver-arg", "extra kube-apiserver flag, e.g. --apiserver-arg=--v=2 (repeatable)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if *dir == "" || fs.NArg() > 0 {
		fail(2, "usage: controlplane --dir DIR [--port N] [--feature-gates G] [--apiserver-arg=--flag=value ...]")
	}
	if *port < 0 || *port > 65535 {
		fail(2, "--port %d: not a port number", *port)
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		fail(2, "--dir %s: %v", *dir, err)
	}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		fail(2, "--dir %s: %v", *dir, err)
	}
	*dir = abs
	if *port == 0 {
		if *port, err = freePort(); err != nil {
			fail(1, "no free port on 127.0.0.1: %v", err)
		}
	} else if l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", *port)); err != nil {
		fail(2, "--port %d: 127.0.0.1:%d is in use: %v", *port, *port, err)
	} else {
		l.Close()
	}
	os.Remove(filepath.Join(*dir, "ready"))
	logPath := filepath.Join(*dir, "controlplane.log")
	if err := redirectStderr(logPath); err != nil {
		fail(2, "%s: %v", logPath, err)
	}
	os.Exit(run(*dir, *port, *gates, extra, *timeout, logPath))
}

func run(dir string, port int, gates string, extra []string, timeout time.Duration, logPath string) int {
	// Built first: it installs the SIGTERM/SIGINT handler whose context stops the API server.
	cmd := app.NewAPIServerCommand()
	ctx := cmd.Context()
	started := time.Now()

	p, err := generatePKI(dir)
	if err != nil {
		fmt.Fprintf(userErr, "controlplane: certificates in %s: %v\n", dir, err)
		return 1
	}
	token, tokenFile, err := writeAuth(dir)
	if err != nil {
		fmt.Fprintf(userErr, "controlplane: token file in %s: %v\n", dir, err)
		return 1
	}
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o644); err != nil {
		fmt.Fprintf(userErr, "controlplane: %s: %v\n", policy, err)
		return 1
	}
	etcd, etcdURL, err := startEtcd(dir)
	if err != nil {
		fmt.Fprintf(userErr, "controlplane: %v; see %s\n", err, logPath)
		return 1
	}
	defer etcd.Close()
	if ctx.Err() != nil {
		return 0
	}

	args := []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		// The endpoint reconciler refuses a loopback address; upstream's own test server
		// (cmd/kube-apiserver/app/testing) turns it off the same way.
		"--endpoint-reconciler-type=none",
		fmt.Sprintf("--secure-port=%d", port),
		"--cert-dir=" + filepath.Join(dir, "certs"),
		"--tls-cert-file=" + p.servingCert,
		"--tls-private-key-file=" + p.servingKey,
		"--client-ca-file=" + p.caFile,
		"--token-auth-file=" + tokenFile,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + p.saPub,
		"--service-account-signing-key-file=" + p.saKey,
		"--service-cluster-ip-range=10.0.0.0/24",
		"--authorization-mode=Node,RBAC",
		// The release's default plugins (DefaultTolerationSeconds among them) plus NodeRestriction
		// as kubeadm clusters enable it; PodTolerationRestriction stays off, as by default.
		"--enable-admission-plugins=NodeRestriction",
		"--disable-admission-plugins=PodTolerationRestriction",
		"--audit-policy-file=" + policy,
		"--audit-log-path=" + filepath.Join(dir, "audit.log"),
		"--audit-log-format=json",
		// Blocking: each entry is written before the response is sent, so the log is complete
		// the moment a scenario's last request has been answered.
		"--audit-log-mode=blocking",
	}
	if gates != "" {
		args = append(args, "--feature-gates="+gates)
	}
	args = append(args, extra...)
	cmd.SetArgs(args)

	done := make(chan error, 1)
	go func() { done <- cmd.Execute() }()

	server := fmt.Sprintf("https://127.0.0.1:%d", port)
	if err := waitReady(ctx, server, p.caPEM, token, timeout, done); err != nil {
		if ctx.Err() != nil {
			return 0
		}
		fmt.Fprintf(userErr, "controlplane: kube-apiserver did not become ready: %v; see %s\n", err, logPath)
		return 1
	}
	if err := writeKubeconfig(dir, server, p.caPEM, token); err != nil {
		fmt.Fprintf(userErr, "controlplane: kubeconfig: %v\n", err)
		return 1
	}
	if err := writeAtomic(filepath.Join(dir, "ready"), []byte(server+"\n")); err != nil {
		fmt.Fprintf(userErr, "controlplane: %v\n", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "controlplane: ready %s after %s\n", server, time.Since(started).Round(time.Millisecond))
	fmt.Printf("ready %s\n", server)

	if err := <-done; err != nil && ctx.Err() == nil {
		fmt.Fprintf(userErr, "controlplane: kube-apiserver stopped: %v; see %s\n", err, logPath)
		return 1
	}
	return 0
}

// waitReady polls /readyz until it answers 200, the API server exits, ctx ends or timeout passes.
func waitReady(ctx context.Context, server string, caPEM []byte, token string, timeout time.Duration, done chan error) error {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	client := &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
	}
	deadline := time.After(timeout)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			done <- err
			if err == nil {
				err = errors.New("exited")
			}
			return err
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline:
			return fmt.Errorf("/readyz not 200 after %s", timeout)
		case <-tick.C:
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, server+"/readyz", nil)
			req.Header.Set("Authorization", "Bearer "+token)
			if resp, err := client.Do(req); err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return nil
				}
			}
		}
	}
}

// freePort asks the kernel for a free 127.0.0.1 port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// redirectStderr points fd 2 (klog, etcd's zap logger, panics) at path, keeping the original
// stderr in userErr for the messages meant for the user.
func redirectStderr(path string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	saved, err := syscall.Dup(2)
	if err != nil {
		return err
	}
	userErr = os.NewFile(uintptr(saved), "stderr")
	if err := syscall.Dup3(int(f.Fd()), 2, 0); err != nil {
		return err
	}
	return f.Close()
}
