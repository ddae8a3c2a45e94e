package stack

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ControllerManagerControllers are the kube-controller-manager controllers
// the stack runs: what makes host Namespaces finish terminating, garbage
// collects owned objects, gives every namespace its default
// ServiceAccount, and fills the aggregated ClusterRoles (admin, edit, view)
// that tenant members are bound to in their host namespaces, and makes the
// pods of Deployments (under the admission a tenant's own pods get: the guard
// policies must hold for pods a controller makes from a tenant's template),
// lets a deleted PersistentVolumeClaim go once no pod uses it (its
// kubernetes.io/pvc-protection finalizer), and recounts what the
// ResourceQuotas of tenants' host namespaces use (admission only ever adds
// to status.used; this controller takes deleted pods and disks off it).
// It also keeps the EndpointSlices of Services, which OVN-Kubernetes'
// cluster-manager mirrors onto user-defined networks and ovnkube-controller
// turns into load balancers (a pod is an endpoint once its status says it
// runs and is ready: no kubelet writes that here, a data-path test does).
// No node, IPAM or route controller runs: there are no nodes, and the pods
// stay Pending.
var ControllerManagerControllers = []string{
	"namespace-controller",
	"garbage-collector-controller",
	"serviceaccount-controller",
	"serviceaccount-token-controller",
	"clusterrole-aggregation-controller",
	"deployment-controller",
	"replicaset-controller",
	"persistentvolumeclaim-protection-controller",
	"resourcequota-controller",
	"endpointslice-controller",
}

// startControllerManager runs kube-controller-manager against the host as
// system:kube-controller-manager. Each controller acts as its own
// ServiceAccount in kube-system (--use-service-account-credentials), bound
// by the bootstrap RBAC policy to its system:controller:* ClusterRole, as
// in a kubeadm cluster: the system:kube-controller-manager ClusterRole
// itself may list and watch everything but delete nothing, so the namespace
// and garbage collector controllers could not work under it.
func (s *Stack) startControllerManager(ctx context.Context) (*process, error) {
	var err error
	if s.controllerManagerPort, err = freePort(); err != nil {
		return nil, err
	}
	kubeconfig := s.KubeconfigPath(KubeControllerManagerUser)
	args := []string{
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(s.controllerManagerPort),
		"--tls-cert-file=" + s.pki.ControllerManagerCert,
		"--tls-private-key-file=" + s.pki.ControllerManagerKey,
		"--controllers=" + strings.Join(ControllerManagerControllers, ","),
		"--use-service-account-credentials=true",
		"--service-account-private-key-file=" + s.pki.ServiceAccountKey,
		"--root-ca-file=" + s.pki.ServerCA,
		"--leader-elect=false",
		// The default 20 QPS makes the deletion of a namespace, one
		// list and delete-collection per namespaced resource, take seconds.
		"--kube-api-qps=200",
		"--kube-api-burst=400",
		// A recount of a ResourceQuota that races admissions in its
		// namespace can write a usage below the truth. The syncer has the
		// host recount on every drop; one that misses the same pod twice
		// is corrected by the full resync (docs/quota.md, "Recounts").
		// Every 30 s instead of the default 5 min: on a small host a full
		// resync reads every quota's objects from the controller's own
		// informers and writes only the quotas that were wrong.
		"--resource-quota-sync-period=30s",
		"--profiling=false",
	}
	s.controllerManager = &process{
		name:    "kube-controller-manager",
		path:    s.bin("kube-controller-manager"),
		args:    append(args, s.opts.ControllerManagerArgs...),
		logPath: s.LogPath("kube-controller-manager"),
		restart: true,
	}
	t := time.Now()
	if err := s.controllerManager.start(); err != nil {
		return s.controllerManager, err
	}
	// /healthz is served without authentication; its certificate is issued
	// by the host CA. It has a check per controller once that controller has
	// started.
	httpClient, err := tlsClient(s.pki.serverCAPEM)
	if err != nil {
		return s.controllerManager, err
	}
	url := fmt.Sprintf("https://127.0.0.1:%d/healthz?verbose", s.controllerManagerPort)
	err = s.controllerManager.waitReady(ctx, s.opts.StartTimeout, func(ctx context.Context) error {
		body, err := httpGet(ctx, httpClient, url, "")
		if err != nil {
			return err
		}
		for _, c := range ControllerManagerControllers {
			if !strings.Contains(body, "[+]"+c+" ok") {
				return fmt.Errorf("%s has not started yet", c)
			}
		}
		// The garbage collector's workers start once its informers on
		// every resource have synced.
		if !fileContains(s.controllerManager.logPath, `"Garbage collector: all resource monitors have synced"`) {
			return fmt.Errorf("the garbage collector has not synced yet")
		}
		return nil
	})
	if err == nil {
		s.logf("kube-controller-manager ready on 127.0.0.1:%d (%s)", s.controllerManagerPort, time.Since(t).Round(100*time.Millisecond))
	}
	return s.controllerManager, err
}
