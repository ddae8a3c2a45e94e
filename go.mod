module tenant.io/tenant-apiserver

go 1.26

require (
	k8s.io/api v0.36.3
	k8s.io/apimachinery v0.36.3
	k8s.io/apiserver v0.36.3
	k8s.io/client-go v0.36.3
	k8s.io/component-base v0.36.3
	k8s.io/code-generator v0.36.3
	k8s.io/kube-openapi v0.0.0-20260317180543-43fb72c5454a
	go.etcd.io/etcd/client/v3 v3.6.8
	go.etcd.io/etcd/server/v3 v3.6.8
)
