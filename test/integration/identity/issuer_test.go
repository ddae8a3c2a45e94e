package identity

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"time"
)

// issuer is an OpenID Connect identity provider on a loopback port, over
// TLS: kube-apiserver discovers its signing key through
// /.well-known/openid-configuration and /keys, as from a real one, and
// the tests sign ID tokens with that key.
type issuer struct {
	server *httptest.Server
	key    *rsa.PrivateKey
}

const issuerKeyID = "identity-test"

func newIssuer() (*issuer, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	iss := &issuer{key: key}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, map[string]interface{}{
			"issuer":                                iss.URL(),
			"jwks_uri":                              iss.URL() + "/keys",
			"response_types_supported":              []string{"id_token"},
			"subject_types_supported":               []string{"public"},
			"id_token_signing_alg_values_supported": []string{"RS256"},
		})
	})
	mux.HandleFunc("/keys", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, map[string]interface{}{"keys": []map[string]string{{
			"kty": "RSA", "alg": "RS256", "use": "sig", "kid": issuerKeyID,
			"n": b64(key.N.Bytes()), "e": b64(big.NewInt(int64(key.E)).Bytes()),
		}}})
	})
	iss.server = httptest.NewTLSServer(mux)
	return iss, nil
}

// URL is the issuer's URL, the tokens' "iss".
func (i *issuer) URL() string { return i.server.URL }

// CAPEM is the certificate of the issuer's TLS server, for kube-apiserver
// to trust.
func (i *issuer) CAPEM() string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: i.server.Certificate().Raw}))
}

func (i *issuer) Close() { i.server.Close() }

// token is an RS256 ID token for subject sub in the IdP's groups, for
// audience, valid for an hour.
func (i *issuer) token(audience, sub string, groups []string) (string, error) {
	now := time.Now()
	header, err := json.Marshal(map[string]string{"alg": "RS256", "kid": issuerKeyID, "typ": "JWT"})
	if err != nil {
		return "", err
	}
	claims, err := json.Marshal(map[string]interface{}{
		"iss": i.URL(), "aud": audience, "sub": sub, "groups": groups,
		"iat": now.Unix(), "nbf": now.Add(-time.Minute).Unix(), "exp": now.Add(time.Hour).Unix(),
	})
	if err != nil {
		return "", err
	}
	signed := b64(header) + "." + b64(claims)
	sum := sha256.Sum256([]byte(signed))
	sig, err := rsa.SignPKCS1v15(rand.Reader, i.key, crypto.SHA256, sum[:])
	if err != nil {
		return "", err
	}
	return signed + "." + b64(sig), nil
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func writeJSON(w http.ResponseWriter, v interface{}) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
