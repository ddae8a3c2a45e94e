package console

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
)

// Authentication modes: how the console learns the user's credentials.
const (
	// AuthToken: the user signs in with a bearer token the host accepts
	// (a ServiceAccount token, a static token, an OIDC ID token); the
	// console keeps it server-side for the session.
	AuthToken = "token"
	// AuthHeader: an authenticating proxy in front of the console (e.g.
	// oauth2-proxy with the cluster's OIDC provider) forwards the user's
	// token in a header with every request; the console keeps nothing.
	AuthHeader = "header"
)

// Options are tenant-console's command line.
type Options struct {
	// BindAddress and Port are where the console listens.
	BindAddress string
	Port        int
	// TLSCertFile and TLSKeyFile serve HTTPS (and make the session cookie
	// Secure). Without them the console serves plain HTTP, for loopback
	// or behind a TLS-terminating proxy only.
	TLSCertFile, TLSKeyFile string
	// Server is the host kube-apiserver's URL; CAFile the CA that signs
	// its serving certificate. Default: the in-cluster service and CA.
	Server, CAFile string
	// AuthMode is AuthToken or AuthHeader.
	AuthMode string
	// TokenHeader carries the user's bearer token in AuthHeader mode.
	TokenHeader string
	// SignOutURL is where Sign out leads in AuthHeader mode (the proxy's
	// own sign-out).
	SignOutURL string
	// SessionTTL bounds a session in AuthToken mode.
	SessionTTL time.Duration
	// CSRFKeyFile holds the key CSRF tokens are derived with; replicas
	// behind one address share it. Default: a random key per process.
	CSRFKeyFile string
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{
		BindAddress: "0.0.0.0",
		Port:        8443,
		AuthMode:    AuthToken,
		TokenHeader: "X-Forwarded-Access-Token",
		SignOutURL:  "/oauth2/sign_out",
		SessionTTL:  8 * time.Hour,
	}
}

// AddFlags adds the options to fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.BindAddress, "bind-address", o.BindAddress, "Address to listen on.")
	fs.IntVar(&o.Port, "port", o.Port, "Port to listen on.")
	fs.StringVar(&o.TLSCertFile, "tls-cert-file", o.TLSCertFile, "Serving certificate (PEM). Without it the console serves plain HTTP: only on loopback or behind a TLS-terminating proxy.")
	fs.StringVar(&o.TLSKeyFile, "tls-private-key-file", o.TLSKeyFile, "Key of --tls-cert-file.")
	fs.StringVar(&o.Server, "server", o.Server, "URL of the host kube-apiserver (the tenant.io API through its aggregator). Default: the in-cluster service.")
	fs.StringVar(&o.CAFile, "certificate-authority", o.CAFile, "CA bundle that signs --server's certificate. Default: the in-cluster service account's CA.")
	fs.StringVar(&o.AuthMode, "auth-mode", o.AuthMode, "How users authenticate: 'token' (a sign-in form takes a bearer token the host accepts) or 'header' (an authenticating proxy forwards the user's token in --token-header).")
	fs.StringVar(&o.TokenHeader, "token-header", o.TokenHeader, "Header carrying the user's bearer token in --auth-mode=header.")
	fs.StringVar(&o.SignOutURL, "sign-out-url", o.SignOutURL, "Where Sign out leads in --auth-mode=header.")
	fs.DurationVar(&o.SessionTTL, "session-ttl", o.SessionTTL, "Lifetime of a session in --auth-mode=token.")
	fs.StringVar(&o.CSRFKeyFile, "csrf-key-file", o.CSRFKeyFile, "File of at least 32 bytes CSRF tokens are derived from; replicas share it. Default: a random key per process.")
}

// Validate checks the options.
func (o *Options) Validate() error {
	var errs []error
	if o.Port < 1 || o.Port > 65535 {
		errs = append(errs, fmt.Errorf("--port %d: not a port", o.Port))
	}
	if (o.TLSCertFile == "") != (o.TLSKeyFile == "") {
		errs = append(errs, errors.New("--tls-cert-file and --tls-private-key-file go together"))
	}
	switch o.AuthMode {
	case AuthToken:
	case AuthHeader:
		if o.TokenHeader == "" {
			errs = append(errs, errors.New("--auth-mode=header needs --token-header"))
		}
	default:
		errs = append(errs, fmt.Errorf("--auth-mode %q: use token or header", o.AuthMode))
	}
	if o.SessionTTL <= 0 {
		errs = append(errs, errors.New("--session-ttl must be positive"))
	}
	return errors.Join(errs...)
}

// apiConfig is where the API is and how to trust it, and nothing else: the
// console has no credentials of its own.
func (o *Options) apiConfig() (*rest.Config, error) {
	if o.Server == "" {
		in, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("no --server and not in a cluster: %w", err)
		}
		cfg := &rest.Config{Host: in.Host, TLSClientConfig: rest.TLSClientConfig{CAFile: in.CAFile}}
		if o.CAFile != "" {
			cfg.CAFile = o.CAFile
		}
		return cfg, nil
	}
	return &rest.Config{Host: o.Server, TLSClientConfig: rest.TLSClientConfig{CAFile: o.CAFile}}, nil
}

func (o *Options) csrfKey() ([]byte, error) {
	if o.CSRFKeyFile == "" {
		key := make([]byte, 32)
		_, err := rand.Read(key)
		return key, err
	}
	key, err := os.ReadFile(o.CSRFKeyFile)
	if err != nil {
		return nil, err
	}
	if len(key) < 32 {
		return nil, fmt.Errorf("--csrf-key-file %s: %d bytes, at least 32 needed", o.CSRFKeyFile, len(key))
	}
	return key, nil
}

// NewCommand is tenant-console's command.
func NewCommand(ctx context.Context, o *Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tenant-console",
		Short: "The tenant.io self-service web console",
		Long: `tenant-console serves the web console of tenant.io: tenants manage their
networks, namespaces, floating IPs and load balancers, providers onboard
tenants. Every call goes to the host kube-apiserver with the signed-in
user's own credentials; the console has no privileges of its own.`,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(ctx)
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

// Run serves until ctx is done.
func (o *Options) Run(ctx context.Context) error {
	cfg, err := o.apiConfig()
	if err != nil {
		return err
	}
	key, err := o.csrfKey()
	if err != nil {
		return err
	}
	srv, err := NewServer(Config{
		API:         cfg,
		AuthMode:    o.AuthMode,
		TokenHeader: o.TokenHeader,
		SignOutURL:  o.SignOutURL,
		SessionTTL:  o.SessionTTL,
		CSRFKey:     key,
		Secure:      o.TLSCertFile != "",
	})
	if err != nil {
		return err
	}
	addr := net.JoinHostPort(o.BindAddress, strconv.Itoa(o.Port))
	hs := &http.Server{
		Addr:              addr,
		Handler:           srv,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(shutdown)
	}()
	scheme := "http"
	if o.TLSCertFile != "" {
		scheme = "https"
	}
	klog.InfoS("Serving the console", "url", scheme+"://"+addr, "api", cfg.Host, "authMode", o.AuthMode)
	if o.TLSCertFile != "" {
		err = hs.ListenAndServeTLS(o.TLSCertFile, o.TLSKeyFile)
	} else {
		err = hs.ListenAndServe()
	}
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
