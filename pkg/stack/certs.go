package stack

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
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

// TenantAPIServerServiceName is the host Service (in TenantAPIServerNamespace)
// the APIService points at; the aggregator verifies the tenant-apiserver
// serving certificate against "<name>.<namespace>.svc".
const (
	TenantAPIServerServiceName = "tenant-apiserver"
	TenantAPIServerNamespace   = "tenant-system"
)

// pki holds the paths of every certificate and key of a stack. All files
// live in one directory of the work dir.
type pki struct {
	// kube-apiserver serving CA and certificate (127.0.0.1, localhost).
	ServerCA, ServerCert, ServerKey string
	// kube-controller-manager serving certificate, issued by the same CA.
	ControllerManagerCert, ControllerManagerKey string
	// CA for client certificates presented to kube-apiserver.
	ClientCA string
	// Front-proxy (request-header) CA and the aggregator's client certificate.
	FrontProxyCA, FrontProxyClientCert, FrontProxyClientKey string
	// Service-account signing key pair.
	ServiceAccountKey, ServiceAccountPub string
	// tenant-apiserver serving CA and certificate.
	TenantCA, TenantCert, TenantKey string
	// The console's serving certificate (127.0.0.1, localhost), issued by
	// the kube-apiserver serving CA.
	ConsoleCert, ConsoleKey string

	serverCAPEM, tenantCAPEM []byte
}

// certAuthority is a CA able to issue leaf certificates.
type certAuthority struct {
	cert *x509.Certificate
	key  crypto.Signer
}

// generatePKI writes a fresh set of CAs, certificates and keys into dir.
func generatePKI(dir string) (*pki, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	p := &pki{}
	path := func(name string) string { return filepath.Join(dir, name) }

	serverCA, err := newCA("tenant-stack-apiserver-ca", path("apiserver-ca.crt"), "")
	if err != nil {
		return nil, err
	}
	p.ServerCA = path("apiserver-ca.crt")
	p.serverCAPEM = encodeCert(serverCA.cert)
	p.ServerCert, p.ServerKey = path("apiserver.crt"), path("apiserver.key")
	if err := serverCA.issue(leafSpec{
		commonName: "kube-apiserver",
		dnsNames:   []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
		ips:        []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		usage:      []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, p.ServerCert, p.ServerKey); err != nil {
		return nil, err
	}
	p.ControllerManagerCert, p.ControllerManagerKey = path("kube-controller-manager.crt"), path("kube-controller-manager.key")
	if err := serverCA.issue(leafSpec{
		commonName: "kube-controller-manager",
		dnsNames:   []string{"localhost"},
		ips:        []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		usage:      []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, p.ControllerManagerCert, p.ControllerManagerKey); err != nil {
		return nil, err
	}

	p.ConsoleCert, p.ConsoleKey = path("tenant-console.crt"), path("tenant-console.key")
	if err := serverCA.issue(leafSpec{
		commonName: "tenant-console",
		dnsNames:   []string{"localhost"},
		ips:        []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		usage:      []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, p.ConsoleCert, p.ConsoleKey); err != nil {
		return nil, err
	}

	p.ClientCA = path("client-ca.crt")
	if _, err := newCA("tenant-stack-client-ca", p.ClientCA, path("client-ca.key")); err != nil {
		return nil, err
	}

	frontProxyCA, err := newCA("tenant-stack-front-proxy-ca", path("front-proxy-ca.crt"), "")
	if err != nil {
		return nil, err
	}
	p.FrontProxyCA = path("front-proxy-ca.crt")
	p.FrontProxyClientCert, p.FrontProxyClientKey = path("front-proxy-client.crt"), path("front-proxy-client.key")
	if err := frontProxyCA.issue(leafSpec{
		commonName: "front-proxy-client",
		usage:      []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, p.FrontProxyClientCert, p.FrontProxyClientKey); err != nil {
		return nil, err
	}

	p.ServiceAccountKey, p.ServiceAccountPub = path("sa.key"), path("sa.pub")
	if err := writeRSAKeyPair(p.ServiceAccountKey, p.ServiceAccountPub); err != nil {
		return nil, err
	}

	tenantCA, err := newCA("tenant-stack-tenant-apiserver-ca", path("tenant-apiserver-ca.crt"), "")
	if err != nil {
		return nil, err
	}
	p.TenantCA = path("tenant-apiserver-ca.crt")
	p.tenantCAPEM = encodeCert(tenantCA.cert)
	p.TenantCert, p.TenantKey = path("tenant-apiserver.crt"), path("tenant-apiserver.key")
	svc := TenantAPIServerServiceName + "." + TenantAPIServerNamespace
	if err := tenantCA.issue(leafSpec{
		commonName: svc + ".svc",
		dnsNames:   []string{svc + ".svc", svc, svc + ".svc.cluster.local", "localhost"},
		ips:        []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		usage:      []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, p.TenantCert, p.TenantKey); err != nil {
		return nil, err
	}
	return p, nil
}

// newCA creates a self-signed CA and writes its certificate (and, when
// keyPath is set, its key).
func newCA(commonName, certPath, keyPath string) (*certAuthority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := newSerial()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("creating CA %s: %w", commonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(certPath, encodeCert(cert), 0o644); err != nil {
		return nil, err
	}
	if keyPath != "" {
		if err := writeKey(keyPath, key); err != nil {
			return nil, err
		}
	}
	return &certAuthority{cert: cert, key: key}, nil
}

// leafSpec describes a certificate to issue.
type leafSpec struct {
	commonName    string
	organizations []string
	dnsNames      []string
	ips           []net.IP
	usage         []x509.ExtKeyUsage
}

// issue creates a key and a certificate signed by the CA and writes both.
func (ca *certAuthority) issue(spec leafSpec, certPath, keyPath string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	serial, err := newSerial()
	if err != nil {
		return err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: spec.commonName, Organization: spec.organizations},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  spec.usage,
		DNSNames:     spec.dnsNames,
		IPAddresses:  spec.ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		return fmt.Errorf("issuing %s: %w", spec.commonName, err)
	}
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return err
	}
	return writeKey(keyPath, key)
}

// writeRSAKeyPair writes an RSA private key (PKCS#1) and its public key (PKIX).
func writeRSAKeyPair(keyPath, pubPath string) error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600); err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return err
	}
	return os.WriteFile(pubPath, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o644)
}

func writeKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600)
}

func encodeCert(cert *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})
}

func newSerial() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
}
