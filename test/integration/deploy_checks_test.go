package integration

import (
	"bufio"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"tenant.io/tenant-apiserver/pkg/stack"
)

// What the checks of the rendered overlays read: a workload's first
// container and its volumes, the ServiceMonitor's TLS, certificates.

// mustFind returns the rendered object of kind and name, failing the test
// when there is none.
func (r *rendered) mustFind(t *testing.T, kind, name string) *unstructured.Unstructured {
	t.Helper()
	o := r.find(kind, name)
	if o == nil {
		t.Fatalf("%s: no %s %s", r.path, kind, name)
	}
	return o
}

// mountedSecret returns the Secret of the tenant-apiserver Deployment's
// volume named volume.
func (r *rendered) mountedSecret(t *testing.T, volume string) string {
	t.Helper()
	return podSecret(t, r.mustFind(t, "Deployment", "tenant-apiserver"), volume)
}

// serviceMonitorTLS returns the tlsConfig of the tenant-apiserver
// ServiceMonitor's endpoint.
func (r *rendered) serviceMonitorTLS(t *testing.T) map[string]any {
	t.Helper()
	eps, _, _ := unstructured.NestedSlice(r.mustFind(t, "ServiceMonitor", "tenant-apiserver").Object, "spec", "endpoints")
	if len(eps) != 1 {
		t.Fatalf("%s: the ServiceMonitor has %d endpoints, want 1", r.path, len(eps))
	}
	tls, _, _ := unstructured.NestedMap(eps[0].(map[string]any), "tlsConfig")
	return tls
}

// podSecret returns the Secret of the pod template's volume named volume.
func podSecret(t *testing.T, workload *unstructured.Unstructured, volume string) string {
	t.Helper()
	vols, _, _ := unstructured.NestedSlice(workload.Object, "spec", "template", "spec", "volumes")
	for _, v := range vols {
		v := v.(map[string]any)
		if v["name"] == volume {
			if name, _, _ := unstructured.NestedString(v, "secret", "secretName"); name != "" {
				return name
			}
		}
	}
	t.Fatalf("%s %s: no Secret volume %q", workload.GetKind(), workload.GetName(), volume)
	return ""
}

// container returns the first container of a workload's pod template,
// its flags (--name=value; a flag without a value maps to "") and the
// volume of each mount path.
func container(t *testing.T, workload *unstructured.Unstructured) (c map[string]any, flags, mounts map[string]string) {
	t.Helper()
	cs, _, _ := unstructured.NestedSlice(workload.Object, "spec", "template", "spec", "containers")
	if len(cs) == 0 {
		t.Fatalf("%s %s: no container", workload.GetKind(), workload.GetName())
	}
	c = cs[0].(map[string]any)
	flags = map[string]string{}
	args, _, _ := unstructured.NestedStringSlice(c, "args")
	for _, a := range args {
		name, value, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		flags[name] = value
	}
	mounts = map[string]string{}
	ms, _, _ := unstructured.NestedSlice(c, "volumeMounts")
	for _, m := range ms {
		m := m.(map[string]any)
		mounts[m["mountPath"].(string)] = m["name"].(string)
	}
	return c, flags, mounts
}

// fileSecret returns the Secret whose volume holds path in the workload's
// first container, and the key (file name) path reads.
func fileSecret(t *testing.T, workload *unstructured.Unstructured, path string) (secret, key string) {
	t.Helper()
	_, _, mounts := container(t, workload)
	dir, key := filepath.Split(path)
	volume, ok := mounts[filepath.Clean(dir)]
	if !ok {
		t.Errorf("%s %s: nothing is mounted at %s", workload.GetKind(), workload.GetName(), dir)
		return "", key
	}
	return podSecret(t, workload, volume), key
}

// checkEtcdClient: tenant-apiserver reaches etcd over TLS with a client
// certificate, whose three files come from one Secret with the keys of a
// kubernetes.io/tls Secret and its CA (as cert-manager writes them).
func checkEtcdClient(t *testing.T, r *rendered) {
	t.Helper()
	d := r.mustFind(t, "Deployment", "tenant-apiserver")
	_, flags, _ := container(t, d)
	if u, err := url.Parse(flags["etcd-servers"]); err != nil || u.Scheme != "https" {
		t.Errorf("%s: --etcd-servers=%q, want https", r.path, flags["etcd-servers"])
	}
	want := map[string]string{"etcd-cafile": "ca.crt", "etcd-certfile": "tls.crt", "etcd-keyfile": "tls.key"}
	for flag, wantKey := range want {
		secret, key := fileSecret(t, d, flags[flag])
		if secret != "tenant-apiserver-etcd-client" || key != wantKey {
			t.Errorf("%s: --%s reads %q of Secret %q, want %q of tenant-apiserver-etcd-client", r.path, flag, key, secret, wantKey)
		}
	}
}

// checkMonitoring: the ServiceMonitor selects tenant-apiserver's Service
// and scrapes /metrics over HTTPS with Prometheus's token, verifying the
// serving certificate for the Service's name; the host grants the
// Prometheus ServiceAccount of promNamespace the get on /metrics and the
// reads that find the targets.
func checkMonitoring(t *testing.T, r *rendered, promNamespace string) {
	t.Helper()
	sm := r.mustFind(t, "ServiceMonitor", "tenant-apiserver")
	svc := r.mustFind(t, "Service", "tenant-apiserver")
	sel, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
	if len(sel) == 0 {
		t.Errorf("%s: the ServiceMonitor selects no labels", r.path)
	}
	for k, v := range sel {
		if svc.GetLabels()[k] != v {
			t.Errorf("%s: the ServiceMonitor selects %s=%s, the Service has %v", r.path, k, v, svc.GetLabels())
		}
	}
	eps, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	ep := eps[0].(map[string]any)
	ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
	var portNames []string
	for _, p := range ports {
		portNames = append(portNames, p.(map[string]any)["name"].(string))
	}
	if !slices.Contains(portNames, fmt.Sprint(ep["port"])) || ep["scheme"] != "https" || ep["path"] != "/metrics" {
		t.Errorf("%s: the ServiceMonitor scrapes port %v (Service's: %v), scheme %v, path %v; want https /metrics on a Service port",
			r.path, ep["port"], portNames, ep["scheme"], ep["path"])
	}
	if ep["bearerTokenFile"] != "/var/run/secrets/kubernetes.io/serviceaccount/token" {
		t.Errorf("%s: the ServiceMonitor presents %v, want Prometheus's ServiceAccount token", r.path, ep["bearerTokenFile"])
	}
	if got := r.serviceMonitorTLS(t)["serverName"]; got != "tenant-apiserver.tenant-system.svc" {
		t.Errorf("%s: the ServiceMonitor verifies the serving certificate for %v, want the Service's name", r.path, got)
	}

	role := r.mustFind(t, "ClusterRole", "tenant-apiserver-metrics-reader")
	rules, _, _ := unstructured.NestedSlice(role.Object, "rules")
	granted := false
	for _, rule := range rules {
		urls, _, _ := unstructured.NestedStringSlice(rule.(map[string]any), "nonResourceURLs")
		verbs, _, _ := unstructured.NestedStringSlice(rule.(map[string]any), "verbs")
		granted = granted || slices.Contains(urls, "/metrics") && slices.Contains(verbs, "get")
	}
	if !granted {
		t.Errorf("%s: ClusterRole %s grants no get on /metrics", r.path, role.GetName())
	}
	for _, b := range []struct{ kind, name, role string }{
		{"ClusterRoleBinding", "tenant-apiserver-metrics-reader", "tenant-apiserver-metrics-reader"},
		{"RoleBinding", "tenant-apiserver-prometheus", "tenant-apiserver-prometheus"},
	} {
		o := r.mustFind(t, b.kind, b.name)
		if got, _, _ := unstructured.NestedString(o.Object, "roleRef", "name"); got != b.role {
			t.Errorf("%s: %s %s binds %q, want %q", r.path, b.kind, b.name, got, b.role)
		}
		subjects, _, _ := unstructured.NestedSlice(o.Object, "subjects")
		if len(subjects) != 1 || subjects[0].(map[string]any)["kind"] != "ServiceAccount" ||
			subjects[0].(map[string]any)["name"] != "prometheus-k8s" || subjects[0].(map[string]any)["namespace"] != promNamespace {
			t.Errorf("%s: %s %s binds %v, want ServiceAccount %s/prometheus-k8s", r.path, b.kind, b.name, subjects, promNamespace)
		}
	}
}

// checkEtcdComponent: the etcd of components/etcd is three members of the
// etcd release the test stack builds, one per node, a quorum kept through
// drains, reached by the name tenant-apiserver dials; every certificate
// the members and tenant-apiserver use is issued by one CA, for the names
// it is used under and the usages it is used for.
func checkEtcdComponent(t *testing.T, r *rendered) {
	t.Helper()
	sts := r.mustFind(t, "StatefulSet", "etcd")
	c, flags, _ := container(t, sts)
	const ns = "tenant-system"

	pin := etcdPin(t)
	if image, _ := c["image"].(string); !strings.HasSuffix(image, ":"+pin) {
		t.Errorf("%s: etcd image %q, want the release the test stack builds, %s", r.path, image, pin)
	}
	replicas := number(sts, "spec", "replicas")
	if replicas != 3 {
		t.Errorf("%s: %d etcd members, want 3", r.path, replicas)
	}
	if got, _, _ := unstructured.NestedString(sts.Object, "spec", "podManagementPolicy"); got != "Parallel" {
		t.Errorf("%s: podManagementPolicy %q: a new cluster needs all its members started", r.path, got)
	}
	members := strings.Split(flags["initial-cluster"], ",")
	if len(members) != int(replicas) {
		t.Errorf("%s: --initial-cluster lists %d members, the StatefulSet runs %d", r.path, len(members), replicas)
	}
	podLabels, _, _ := unstructured.NestedStringMap(sts.Object, "spec", "template", "metadata", "labels")
	terms, _, _ := unstructured.NestedSlice(sts.Object, "spec", "template", "spec", "affinity", "podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution")
	spread := false
	for _, term := range terms {
		sel, _, _ := unstructured.NestedStringMap(term.(map[string]any), "labelSelector", "matchLabels")
		spread = spread || term.(map[string]any)["topologyKey"] == "kubernetes.io/hostname" && len(sel) > 0 && matches(sel, podLabels)
	}
	if !spread {
		t.Errorf("%s: etcd members may share a node (required anti-affinity: %v)", r.path, terms)
	}
	pdb := r.mustFind(t, "PodDisruptionBudget", "etcd")
	pdbSel, _, _ := unstructured.NestedStringMap(pdb.Object, "spec", "selector", "matchLabels")
	if minAvailable := number(pdb, "spec", "minAvailable"); minAvailable != replicas/2+1 || !matches(pdbSel, podLabels) {
		t.Errorf("%s: the etcd PodDisruptionBudget keeps %d of the members selected by %v, want a quorum (%d)", r.path, minAvailable, pdbSel, replicas/2+1)
	}
	if claims, _, _ := unstructured.NestedSlice(sts.Object, "spec", "volumeClaimTemplates"); len(claims) != 1 {
		t.Errorf("%s: etcd members have %d volume claims, want one each", r.path, len(claims))
	}

	peerSvcName, _, _ := unstructured.NestedString(sts.Object, "spec", "serviceName")
	peerSvc := r.mustFind(t, "Service", peerSvcName)
	if ip, _, _ := unstructured.NestedString(peerSvc.Object, "spec", "clusterIP"); ip != "None" {
		t.Errorf("%s: the StatefulSet's Service %s is not headless", r.path, peerSvcName)
	}
	if ok, _, _ := unstructured.NestedBool(peerSvc.Object, "spec", "publishNotReadyAddresses"); !ok {
		t.Errorf("%s: members are not found by name before they are ready: no quorum can form", r.path)
	}
	_, apiFlags, _ := container(t, r.mustFind(t, "Deployment", "tenant-apiserver"))
	u, err := url.Parse(apiFlags["etcd-servers"])
	if err != nil {
		t.Fatal(err)
	}
	clientSvcName, _, _ := strings.Cut(u.Hostname(), ".")
	clientSvc := r.mustFind(t, "Service", clientSvcName)
	svcSel, _, _ := unstructured.NestedStringMap(clientSvc.Object, "spec", "selector")
	if u.Hostname() != clientSvcName+"."+ns+".svc" || u.Port() != "2379" || len(svcSel) == 0 || !matches(svcSel, podLabels) {
		t.Errorf("%s: tenant-apiserver dials %s, Service %s selects %v, the members are %v", r.path, u.Host, clientSvcName, svcSel, podLabels)
	}

	// The certificates: the files each flag names, the Secret they come
	// from, the Certificate that writes that Secret.
	certFor := func(workload *unstructured.Unstructured, path string) *unstructured.Unstructured {
		secret, _ := fileSecret(t, workload, path)
		for _, o := range r.objects {
			if name, _, _ := unstructured.NestedString(o.Object, "spec", "secretName"); o.GetKind() == "Certificate" && name == secret {
				return o
			}
		}
		t.Fatalf("%s: no Certificate writes Secret %s", r.path, secret)
		return nil
	}
	for _, flag := range []string{"client-cert-auth", "peer-client-cert-auth"} {
		if v, ok := flags[flag]; !ok || v == "false" {
			t.Errorf("%s: etcd without --%s", r.path, flag)
		}
	}
	member := "*." + peerSvcName + "." + ns + ".svc"
	server := certFor(sts, flags["cert-file"])
	peer := certFor(sts, flags["peer-cert-file"])
	client := certFor(r.mustFind(t, "Deployment", "tenant-apiserver"), apiFlags["etcd-certfile"])
	for _, want := range []struct {
		cert   *unstructured.Unstructured
		names  []string
		usages []string
	}{
		{server, []string{u.Hostname(), member}, []string{"server auth"}},
		{peer, []string{member}, []string{"server auth", "client auth"}},
		{client, nil, []string{"client auth"}},
	} {
		names, _, _ := unstructured.NestedStringSlice(want.cert.Object, "spec", "dnsNames")
		usages, _, _ := unstructured.NestedStringSlice(want.cert.Object, "spec", "usages")
		for _, n := range want.names {
			if !slices.Contains(names, n) {
				t.Errorf("%s: Certificate %s names %v, not %s", r.path, want.cert.GetName(), names, n)
			}
		}
		for _, u := range want.usages {
			if !slices.Contains(usages, u) {
				t.Errorf("%s: Certificate %s has usages %v, not %s", r.path, want.cert.GetName(), usages, u)
			}
		}
	}
	// One CA signs all three, and etcd trusts it for clients and peers:
	// the ca.crt of the Secrets, which cert-manager writes from the Issuer.
	issuer := func(cert *unstructured.Unstructured) string {
		name, _, _ := unstructured.NestedString(cert.Object, "spec", "issuerRef", "name")
		return name
	}
	if issuer(server) != issuer(peer) || issuer(server) != issuer(client) {
		t.Errorf("%s: etcd's certificates come from Issuers %s, %s, %s; want one", r.path, issuer(server), issuer(peer), issuer(client))
	}
	caSecret, _, _ := unstructured.NestedString(r.mustFind(t, "Issuer", issuer(server)).Object, "spec", "ca", "secretName")
	if caSecret == "" {
		t.Errorf("%s: Issuer %s is no CA Issuer", r.path, issuer(server))
	}
	for _, f := range []string{"trusted-ca-file", "peer-trusted-ca-file"} {
		if secret, key := fileSecret(t, sts, flags[f]); key != "ca.crt" || (secret != podSecret(t, sts, "server-tls") && secret != podSecret(t, sts, "peer-tls")) {
			t.Errorf("%s: etcd's --%s is %s of Secret %s, want the ca.crt of its own certificate's Secret", r.path, f, key, secret)
		}
	}
}

// number returns the number at fields of o (decoded from JSON: a
// float64), or -1.
func number(o *unstructured.Unstructured, fields ...string) int64 {
	v, _, _ := unstructured.NestedFieldNoCopy(o.Object, fields...)
	switch n := v.(type) {
	case float64:
		return int64(n)
	case int64:
		return n
	}
	return -1
}

// matches reports whether labels has every key and value of selector.
func matches(selector, labels map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// etcdPin returns the etcd release the test stack builds: the version of
// go.etcd.io/etcd/server/v3 in hack/tools/go.mod.
func etcdPin(t *testing.T) string {
	t.Helper()
	root, err := stack.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(root, "hack", "tools", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "go.etcd.io/etcd/server/v3" {
			return fields[1]
		}
		if len(fields) >= 3 && fields[0] == "require" && fields[1] == "go.etcd.io/etcd/server/v3" {
			return fields[2]
		}
	}
	t.Fatalf("hack/tools/go.mod requires no go.etcd.io/etcd/server/v3")
	return ""
}

// checkAudit: tenant-apiserver writes its audit log with the policy of
// artifacts/deploy/base/audit/policy.yaml — the file the test stack runs
// with — read from a ConfigMap the overlay carries.
func checkAudit(t *testing.T, r *rendered) {
	t.Helper()
	d := r.mustFind(t, "Deployment", "tenant-apiserver")
	_, flags, mounts := container(t, d)
	if flags["audit-log-path"] == "" {
		t.Errorf("%s: tenant-apiserver writes no audit log (--audit-log-path)", r.path)
	}
	policy := flags["audit-policy-file"]
	dir, key := filepath.Split(policy)
	volume, ok := mounts[filepath.Clean(dir)]
	if policy == "" || !ok {
		t.Errorf("%s: --audit-policy-file=%q is not on a mounted volume", r.path, policy)
		return
	}
	vols, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "volumes")
	configMap := ""
	for _, v := range vols {
		if v := v.(map[string]any); v["name"] == volume {
			configMap, _, _ = unstructured.NestedString(v, "configMap", "name")
		}
	}
	cm := r.find("ConfigMap", configMap)
	if cm == nil {
		t.Errorf("%s: the audit policy's volume %q names ConfigMap %q, which the overlay does not make", r.path, volume, configMap)
		return
	}
	root, err := stack.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(root, "artifacts", "deploy", "base", "audit", "policy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := unstructured.NestedString(cm.Object, "data", key); got != string(want) {
		t.Errorf("%s: ConfigMap %s holds %q an audit policy other than artifacts/deploy/base/audit/policy.yaml", r.path, configMap, key)
	}
}
