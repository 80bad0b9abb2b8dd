package main

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

// startEtcd runs a single-member etcd on two free 127.0.0.1 ports with its data in dir/etcd.
// A port found free may be taken by another process before etcd binds it (tests start control
// planes in parallel): then it tries again on new ports, a few times.
func startEtcd(dir string) (*embed.Etcd, string, error) {
	for attempt := 1; ; attempt++ {
		e, client, err := startEtcdOnce(dir)
		taken := err != nil && (errors.Is(err, syscall.EADDRINUSE) ||
			strings.Contains(err.Error(), "address already in use"))
		if !taken || attempt == 5 {
			return e, client, err
		}
		if err := os.RemoveAll(filepath.Join(dir, "etcd")); err != nil {
			return nil, "", err
		}
	}
}

// startEtcdOnce is one attempt of startEtcd. Fsync is off: the data is a test cluster's and
// start-up speed matters more than durability.
func startEtcdOnce(dir string) (*embed.Etcd, string, error) {
	clientPort, err := freePort()
	if err != nil {
		return nil, "", err
	}
	peerPort, err := freePort()
	if err != nil {
		return nil, "", err
	}
	client := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", clientPort)}
	peer := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", peerPort)}

	cfg := embed.NewConfig()
	cfg.Name = "controlplane"
	cfg.Dir = filepath.Join(dir, "etcd")
	cfg.ListenClientUrls = []url.URL{client}
	cfg.AdvertiseClientUrls = []url.URL{client}
	cfg.ListenPeerUrls = []url.URL{peer}
	cfg.AdvertisePeerUrls = []url.URL{peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.LogLevel = "warn"
	cfg.LogOutputs = []string{"stderr"}
	cfg.UnsafeNoFsync = true

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, "", fmt.Errorf("starting etcd: %w", err)
	}
	select {
	case <-e.Server.ReadyNotify():
		return e, client.String(), nil
	case err := <-e.Err():
		e.Close()
		return nil, "", fmt.Errorf("etcd: %w", err)
	case <-time.After(60 * time.Second):
		e.Close()
		return nil, "", fmt.Errorf("etcd not ready after 60s")
	}
}
