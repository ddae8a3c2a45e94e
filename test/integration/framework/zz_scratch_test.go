package framework

import (
	"context"
	"os"
	"testing"
	"time"
)

func TestScratchStack(t *testing.T) {
	ctx := context.Background()
	t0 := time.Now()
	s, err := Start(ctx, Options{BinDir: "/tmp/fakebin", SkipBuild: true, Log: os.Stderr, KeepWorkDir: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	t.Logf("start %s workdir %s", time.Since(t0), s.WorkDir())
	pool := `apiVersion: metallb.io/v1beta1
kind: IPAddressPool
metadata: {name: p1, namespace: metallb-system}
spec: {addresses: [203.0.113.0/28]}
---
apiVersion: v1
kind: Service
metadata: {name: lb, namespace: default}
spec:
  type: LoadBalancer
  ports: [{port: 80}]
  selector: {app: x}
`
	os.WriteFile(s.path("lb.yaml"), []byte(pool), 0o644)
	out, _, err := s.Kubectl(ctx, "admin", "apply", "-f", s.path("lb.yaml"))
	t.Log(out, err)
	t1 := time.Now()
	for time.Since(t1) < 30*time.Second {
		out, _, _ = s.Kubectl(ctx, "admin", "get", "svc", "lb", "-o", "jsonpath={.status.loadBalancer.ingress}")
		if out != "" { break }
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("lb ingress after %s: %s", time.Since(t1), out)
	t1 = time.Now()
	if err := s.StopHost(); err != nil { t.Fatal(err) }
	t.Logf("host stop %s", time.Since(t1))
	if err := s.StartHost(ctx); err != nil { t.Fatal(err) }
	t.Logf("host restart %s", time.Since(t1))
	t1 = time.Now()
	if err := s.StopTenantAPIServer(); err != nil { t.Fatal(err) }
	if err := s.StartTenantAPIServer(ctx); err != nil { t.Fatal(err) }
	t.Logf("tenant restart %s", time.Since(t1))
	t1 = time.Now()
	if err := s.Stop(); err != nil { t.Fatal(err) }
	t.Logf("stop %s", time.Since(t1))
}
