package framework

import (
	"fmt"
	"path/filepath"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// writeKubeconfigs writes one kubeconfig per user into dir: the host
// kube-apiserver's URL, its CA embedded, and the user's bearer token.
func writeKubeconfigs(dir, server string, caPEM []byte, users []User) error {
	for _, u := range users {
		cfg := clientcmdapi.NewConfig()
		cfg.Clusters["tenant-stack"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
		cfg.AuthInfos[u.Name] = &clientcmdapi.AuthInfo{Token: u.Token}
		cfg.Contexts[u.Name] = &clientcmdapi.Context{Cluster: "tenant-stack", AuthInfo: u.Name}
		cfg.CurrentContext = u.Name
		path := filepath.Join(dir, kubeconfigFileName(u.Name))
		if err := clientcmd.WriteToFile(*cfg, path); err != nil {
			return fmt.Errorf("writing kubeconfig of %s: %w", u.Name, err)
		}
	}
	return nil
}

// restConfig is the client configuration of a user against server.
func restConfig(server string, caPEM []byte, u User) *rest.Config {
	return &rest.Config{
		Host:            server,
		BearerToken:     u.Token,
		TLSClientConfig: rest.TLSClientConfig{CAData: caPEM},
		QPS:             100,
		Burst:           200,
	}
}
