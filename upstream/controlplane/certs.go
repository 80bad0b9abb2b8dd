package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki holds the files the API server serves and signs with: a CA, a serving certificate for
// 127.0.0.1/localhost signed by it, and the service-account key. They are generated on the first
// start in a directory and kept by later ones, so that a restarted API server is the same server
// to its clients (taintcheck's fault tests restart it under a running controller).
type pki struct {
	caCert, caPEM           []byte
	servingCert, servingKey string
	caFile, saKey, saPub    string
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}

func newKey() (*ecdsa.PrivateKey, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	return key, der, err
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return n
}

// generatePKI writes ca.crt, apiserver.crt/.key and sa.key/.pub into dir, or reads the CA
// when all of them are there from an earlier start.
func generatePKI(dir string) (*pki, error) {
	p := &pki{
		caFile:      filepath.Join(dir, "ca.crt"),
		servingCert: filepath.Join(dir, "apiserver.crt"),
		servingKey:  filepath.Join(dir, "apiserver.key"),
		saKey:       filepath.Join(dir, "sa.key"),
		saPub:       filepath.Join(dir, "sa.pub"),
	}
	if kept, err := keptPKI(p); kept || err != nil {
		return p, err
	}
	now := time.Now().Add(-time.Hour)
	caKey, _, err := newKey()
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "taintcheck-ca"},
		NotBefore:             now,
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	p.caCert = caDER
	p.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	if err := os.WriteFile(p.caFile, p.caPEM, 0o644); err != nil {
		return nil, err
	}

	srvKey, srvKeyDER, err := newKey()
	if err != nil {
		return nil, err
	}
	srvTmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    now,
		NotAfter:     now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.0.0.1")},
		DNSNames:     []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
	}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, ca, &srvKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	if err := writePEM(p.servingCert, "CERTIFICATE", srvDER); err != nil {
		return nil, err
	}
	if err := writePEM(p.servingKey, "PRIVATE KEY", srvKeyDER); err != nil {
		return nil, err
	}

	saKey, saKeyDER, err := newKey()
	if err != nil {
		return nil, err
	}
	saPubDER, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, err
	}
	if err := writePEM(p.saKey, "PRIVATE KEY", saKeyDER); err != nil {
		return nil, err
	}
	if err := writePEM(p.saPub, "PUBLIC KEY", saPubDER); err != nil {
		return nil, err
	}
	return p, nil
}

// keptPKI fills p from the files of an earlier start, if all of them exist.
func keptPKI(p *pki) (bool, error) {
	for _, f := range []string{p.caFile, p.servingCert, p.servingKey, p.saKey, p.saPub} {
		if _, err := os.Stat(f); err != nil {
			return false, nil
		}
	}
	caPEM, err := os.ReadFile(p.caFile)
	if err != nil {
		return false, err
	}
	block, _ := pem.Decode(caPEM)
	if block == nil || block.Type != "CERTIFICATE" {
		return false, fmt.Errorf("%s: not a PEM certificate", p.caFile)
	}
	p.caPEM, p.caCert = caPEM, block.Bytes
	return true, nil
}
