package stack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// BareMetalHostResource is Metal3's BareMetalHost, of the CRD
// artifacts/host-crds/metal3.io_baremetalhosts.yaml.
var BareMetalHostResource = schema.GroupVersionResource{Group: "metal3.io", Version: "v1alpha1", Resource: "baremetalhosts"}

// The provisioning states, operational statuses and error types of
// BareMetalHost status that the stand-in writes, as baremetal-operator
// v0.10 names them.
const (
	BareMetalStateUnmanaged      = "unmanaged"
	BareMetalStateRegistering    = "registering"
	BareMetalStateInspecting     = "inspecting"
	BareMetalStatePreparing      = "preparing"
	BareMetalStateAvailable      = "available"
	BareMetalStateProvisioning   = "provisioning"
	BareMetalStateProvisioned    = "provisioned"
	BareMetalStateDeprovisioning = "deprovisioning"

	BareMetalOperationalOK         = "OK"
	BareMetalOperationalDiscovered = "discovered"
	BareMetalOperationalError      = "error"

	BareMetalRegistrationError = "registration error"
)

// BareMetalRebootAnnotation is the annotation (alone, or as the prefix of
// reboot.metal3.io/<key>) that asks for a provisioned host's power cycle.
const BareMetalRebootAnnotation = "reboot.metal3.io"

// bareMetalErrorRetry is how many steps the stand-in waits before it
// checks failed credentials again.
const bareMetalErrorRetry = 10

// BareMetalOperatorStandIn plays the Metal3 baremetal-operator's part for
// the BareMetalHosts of a test stack: it is a stand-in, not the operator.
// The operator's module is not served by the Go module proxy, and the
// operator drives servers through Ironic, which cannot run here; so the
// stand-in walks each host through the operator's provisioning states
// (registering, inspecting, preparing, available, provisioning,
// provisioned, deprovisioning) one step at a time, with a hardware
// inventory made up from the host's name, and powers hosts on and off
// by writing status.poweredOn. It writes BareMetalHost status only,
// through the status subresource, never spec; the one metadata write is
// the removal of the reboot.metal3.io annotation once the host is off,
// as the operator does.
//
// What it leaves out: externally provisioned hosts, live ISOs and custom
// deploys, firmware, RAID and servicing, detached hosts, the inspect and
// status annotations, finalizers (a deleted host is gone at once), and the
// labels the operator puts on credentials Secrets.
type BareMetalOperatorStandIn struct {
	dyn    dynamic.Interface
	client kubernetes.Interface
	step   time.Duration
	lister cache.GenericLister
	queue  workqueue.TypedRateLimitingInterface[types.NamespacedName]
	done   chan struct{}

	mu    sync.Mutex
	hosts map[types.NamespacedName]*bareMetalHostRecord
}

// bareMetalHostRecord is what the stand-in remembers of a host, as Ironic
// would of its node.
type bareMetalHostRecord struct {
	// lastStep is when the stand-in last changed the host.
	lastStep time.Time
	// cleaned: the current deprovisioning's cleaning is over.
	cleaned bool
	// reboots and cleanings count what the stand-in did to the host.
	reboots, cleanings int
}

// StartBareMetalOperatorStandIn starts the stand-in on the BareMetalHosts
// of every namespace of the cluster cfg reaches (its user needs to read
// hosts and Secrets, and to update hosts and their status), waits for its
// cache, and returns. step is the pause between two changes of one host.
// It runs until ctx ends; Done tells when it has stopped.
func StartBareMetalOperatorStandIn(ctx context.Context, cfg *rest.Config, step time.Duration) (*BareMetalOperatorStandIn, error) {
	if step <= 0 {
		return nil, fmt.Errorf("baremetal-operator stand-in: step must be positive, got %s", step)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	informers := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
	informer := informers.ForResource(BareMetalHostResource)
	b := &BareMetalOperatorStandIn{
		dyn:    dyn,
		client: client,
		step:   step,
		lister: informer.Lister(),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[types.NamespacedName](),
			workqueue.TypedRateLimitingQueueConfig[types.NamespacedName]{Name: "baremetal-operator-stand-in"}),
		done:  make(chan struct{}),
		hosts: map[types.NamespacedName]*bareMetalHostRecord{},
	}
	if _, err := informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    b.enqueue,
		UpdateFunc: func(_, obj interface{}) { b.enqueue(obj) },
		DeleteFunc: b.enqueue,
	}); err != nil {
		return nil, err
	}

	runCtx, cancel := context.WithCancel(ctx)
	informers.Start(runCtx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), informer.Informer().HasSynced) {
		cancel()
		b.queue.ShutDown()
		informers.Shutdown()
		return nil, fmt.Errorf("baremetal-operator stand-in: waiting for the BareMetalHost cache: %w", context.Cause(ctx))
	}

	const workers = 2
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for b.processNext(runCtx) {
			}
		})
	}
	go func() {
		<-runCtx.Done()
		b.queue.ShutDown()
		wg.Wait()
		informers.Shutdown()
		cancel()
		close(b.done)
	}()
	return b, nil
}

// Done is closed once the stand-in has stopped, its goroutines gone.
func (b *BareMetalOperatorStandIn) Done() <-chan struct{} { return b.done }

// Reboots is how many reboot.metal3.io power cycles of the host the
// stand-in has done (counted when it removes the annotation, the host off).
func (b *BareMetalOperatorStandIn) Reboots(namespace, name string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if r := b.hosts[types.NamespacedName{Namespace: namespace, Name: name}]; r != nil {
		return r.reboots
	}
	return 0
}

// Cleanings is how many times the stand-in has cleaned the host's disks
// while deprovisioning it (automatedCleaningMode metadata, the default).
func (b *BareMetalOperatorStandIn) Cleanings(namespace, name string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if r := b.hosts[types.NamespacedName{Namespace: namespace, Name: name}]; r != nil {
		return r.cleanings
	}
	return 0
}

func (b *BareMetalOperatorStandIn) enqueue(obj interface{}) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	m, err := metaAccessor(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	b.queue.Add(types.NamespacedName{Namespace: m.GetNamespace(), Name: m.GetName()})
}

func metaAccessor(obj interface{}) (metav1.Object, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("baremetal-operator stand-in: unexpected object %T", obj)
	}
	return m, nil
}

func (b *BareMetalOperatorStandIn) processNext(ctx context.Context) bool {
	key, quit := b.queue.Get()
	if quit {
		return false
	}
	defer b.queue.Done(key)
	if err := b.sync(ctx, key); err != nil {
		if ctx.Err() == nil && !apierrors.IsConflict(err) {
			klog.FromContext(ctx).V(2).Info("baremetal-operator stand-in: retrying", "host", key, "err", err)
		}
		b.queue.AddRateLimited(key)
		return true
	}
	b.queue.Forget(key)
	return true
}

// record returns what the stand-in remembers of key, creating it.
func (b *BareMetalOperatorStandIn) record(key types.NamespacedName) *bareMetalHostRecord {
	r := b.hosts[key]
	if r == nil {
		r = &bareMetalHostRecord{}
		b.hosts[key] = r
	}
	return r
}

// stepped notes a change of key now and schedules its next step.
func (b *BareMetalOperatorStandIn) stepped(key types.NamespacedName, update func(*bareMetalHostRecord)) {
	b.mu.Lock()
	r := b.record(key)
	r.lastStep = time.Now()
	if update != nil {
		update(r)
	}
	b.mu.Unlock()
	b.queue.AddAfter(key, b.step)
}

// sync makes at most one change to one host: a step of its state machine
// or of its power, or the removal of its reboot annotation.
func (b *BareMetalOperatorStandIn) sync(ctx context.Context, key types.NamespacedName) error {
	obj, err := b.lister.ByNamespace(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		b.mu.Lock()
		delete(b.hosts, key)
		b.mu.Unlock()
		return nil
	}
	if err != nil {
		return err
	}
	cached, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return fmt.Errorf("unexpected object %T", obj)
	}
	if cached.GetDeletionTimestamp() != nil {
		return nil
	}

	b.mu.Lock()
	r := b.record(key)
	wait := b.step - time.Since(r.lastStep)
	cleaned := r.cleaned
	b.mu.Unlock()
	if wait > 0 {
		b.queue.AddAfter(key, wait)
		return nil
	}

	host := cached.DeepCopy()
	if host.Object["status"] == nil {
		host.Object["status"] = map[string]interface{}{}
	}
	h := bareMetalHost{obj: host, status: host.Object["status"].(map[string]interface{})}

	if h.state() == BareMetalStateProvisioned && !h.poweredOn() {
		if _, ok := host.GetAnnotations()[BareMetalRebootAnnotation]; ok {
			if err := b.removeRebootAnnotation(ctx, host); err != nil {
				return err
			}
			b.stepped(key, func(r *bareMetalHostRecord) { r.reboots++ })
			return nil
		}
	}

	o := b.advance(ctx, h, cleaned)
	if o.err != nil {
		return o.err
	}
	if !equality.Semantic.DeepEqual(host.Object["status"], cached.Object["status"]) {
		h.status["lastUpdated"] = now()
		if _, err := b.dyn.Resource(BareMetalHostResource).Namespace(key.Namespace).UpdateStatus(ctx, host, metav1.UpdateOptions{FieldManager: "baremetal-operator-stand-in"}); err != nil {
			return err
		}
		b.stepped(key, o.record)
		return nil
	}
	if o.record != nil {
		b.stepped(key, o.record)
		return nil
	}
	if o.retry > 0 {
		b.queue.AddAfter(key, o.retry)
	}
	return nil
}

// outcome is what a step did besides changing status.
type outcome struct {
	// record updates what the stand-in remembers of the host; set, the
	// step counts as a change even without a status change.
	record func(*bareMetalHostRecord)
	// retry: look again after this long (a failure that may go away).
	retry time.Duration
	err   error
}

// advance makes one change to h's status, following baremetal-operator's
// state machine; cleaned tells whether the current deprovisioning's
// cleaning is over.
func (b *BareMetalOperatorStandIn) advance(ctx context.Context, h bareMetalHost, cleaned bool) outcome {
	state := h.state()
	if state == "" || state == BareMetalStateUnmanaged {
		if h.specString("bmc", "address") == "" && h.specString("bmc", "credentialsName") == "" {
			if state == "" {
				h.setProvisioning(BareMetalStateUnmanaged)
				h.status["operationalStatus"] = BareMetalOperationalDiscovered
			}
			return outcome{}
		}
		h.setProvisioning(BareMetalStateRegistering)
		h.status["operationalStatus"] = BareMetalOperationalOK
		h.setOperation("register", "start")
		return outcome{}
	}

	// Like the operator, every reconcile of a managed host starts with its
	// BMC credentials.
	secret, problem, err := b.credentials(ctx, h)
	if err != nil {
		return outcome{err: err}
	}
	if problem != "" {
		if h.status["errorType"] != BareMetalRegistrationError || h.status["errorMessage"] != problem {
			h.status["errorType"] = BareMetalRegistrationError
			h.status["errorMessage"] = problem
			h.status["errorCount"] = h.int("errorCount") + 1
		}
		h.status["operationalStatus"] = BareMetalOperationalError
		return outcome{retry: bareMetalErrorRetry * b.step}
	}
	creds := map[string]interface{}{
		"credentials":        map[string]interface{}{"name": secret.Name, "namespace": secret.Namespace},
		"credentialsVersion": secret.ResourceVersion,
	}
	h.status["triedCredentials"] = creds
	h.status["goodCredentials"] = creds
	if h.status["errorType"] == BareMetalRegistrationError {
		delete(h.status, "errorType")
		h.status["errorMessage"] = ""
		h.status["errorCount"] = int64(0)
		h.status["operationalStatus"] = BareMetalOperationalOK
		return outcome{}
	}

	switch state {
	case BareMetalStateRegistering:
		h.provisioning()["ID"] = string(h.obj.GetUID())
		h.setOperation("register", "end")
		h.setOperation("inspect", "start")
		h.setProvisioning(BareMetalStateInspecting)
	case BareMetalStateInspecting:
		h.status["hardware"] = bareMetalHardware(h.obj.GetName(), h.specString("bootMACAddress"))
		h.status["hardwareProfile"] = h.hardwareProfile()
		h.setRootDeviceHints()
		h.setOperation("inspect", "end")
		h.setProvisioning(BareMetalStatePreparing)
	case BareMetalStatePreparing:
		h.setProvisioning(BareMetalStateAvailable)
	case BareMetalStateAvailable:
		if h.needsProvisioning() {
			h.startProvisioning()
			return outcome{}
		}
		h.managePower(false)
	case BareMetalStateProvisioning:
		h.setOperation("provision", "end")
		h.setProvisioning(BareMetalStateProvisioned)
		h.status["poweredOn"] = h.online()
	case BareMetalStateProvisioned:
		if h.provisioningCancelled() {
			h.setOperation("deprovision", "start")
			delete(h.operation("deprovision"), "end")
			h.setProvisioning(BareMetalStateDeprovisioning)
			return outcome{record: func(r *bareMetalHostRecord) { r.cleaned = false }}
		}
		h.managePower(true)
	case BareMetalStateDeprovisioning:
		if !cleaned && h.specString("automatedCleaningMode") != "disabled" {
			// Ironic cleans the disks' metadata: a step of its own, which
			// shows in no status field, as with the operator.
			return outcome{record: func(r *bareMetalHostRecord) { r.cleaned = true; r.cleanings++ }}
		}
		h.provisioning()["image"] = map[string]interface{}{"url": ""}
		h.status["poweredOn"] = false
		h.setOperation("deprovision", "end")
		if h.needsProvisioning() {
			h.startProvisioning()
			return outcome{}
		}
		h.setProvisioning(BareMetalStateAvailable)
	}
	return outcome{}
}

// credentials returns the host's BMC credentials Secret, or why they are
// not usable (the operator's registration error message).
func (b *BareMetalOperatorStandIn) credentials(ctx context.Context, h bareMetalHost) (*corev1.Secret, string, error) {
	name := h.specString("bmc", "credentialsName")
	if name == "" {
		return nil, "no BMC credentials secret name", nil
	}
	secret, err := b.client.CoreV1().Secrets(h.obj.GetNamespace()).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, fmt.Sprintf("BMC credentials secret %s/%s not found", h.obj.GetNamespace(), name), nil
	}
	if err != nil {
		return nil, "", err
	}
	for _, k := range []string{"username", "password"} {
		if len(secret.Data[k]) == 0 {
			return nil, fmt.Sprintf("missing BMC credentials: %s in secret %s/%s", k, secret.Namespace, secret.Name), nil
		}
	}
	return secret, "", nil
}

// removeRebootAnnotation removes reboot.metal3.io from host, unless the
// host changed since it was read.
func (b *BareMetalOperatorStandIn) removeRebootAnnotation(ctx context.Context, host *unstructured.Unstructured) error {
	patch, err := json.Marshal(map[string]interface{}{"metadata": map[string]interface{}{
		"resourceVersion": host.GetResourceVersion(),
		"annotations":     map[string]interface{}{BareMetalRebootAnnotation: nil},
	}})
	if err != nil {
		return err
	}
	_, err = b.dyn.Resource(BareMetalHostResource).Namespace(host.GetNamespace()).Patch(ctx, host.GetName(), types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "baremetal-operator-stand-in"})
	return err
}

// bareMetalHost reads and writes a BareMetalHost held as unstructured
// content (the operator's Go types do not build against this module's
// client-go).
type bareMetalHost struct {
	obj    *unstructured.Unstructured
	status map[string]interface{}
}

func (h bareMetalHost) specString(fields ...string) string {
	s, _, _ := unstructured.NestedString(h.obj.Object, append([]string{"spec"}, fields...)...)
	return s
}

func (h bareMetalHost) online() bool {
	on, _, _ := unstructured.NestedBool(h.obj.Object, "spec", "online")
	return on
}

func (h bareMetalHost) poweredOn() bool {
	on, _ := h.status["poweredOn"].(bool)
	return on
}

func (h bareMetalHost) int(field string) int64 {
	n, _, _ := unstructured.NestedInt64(h.status, field)
	return n
}

func (h bareMetalHost) state() string {
	s, _, _ := unstructured.NestedString(h.status, "provisioning", "state")
	return s
}

// provisioning returns status.provisioning, creating it.
func (h bareMetalHost) provisioning() map[string]interface{} {
	p, ok := h.status["provisioning"].(map[string]interface{})
	if !ok {
		p = map[string]interface{}{"ID": ""}
		h.status["provisioning"] = p
	}
	return p
}

// setProvisioning moves the host to state, with the status fields the
// CRD requires.
func (h bareMetalHost) setProvisioning(state string) {
	h.provisioning()["state"] = state
	for field, zero := range map[string]interface{}{"errorCount": int64(0), "errorMessage": "", "poweredOn": false, "operationalStatus": BareMetalOperationalOK} {
		if _, ok := h.status[field]; !ok {
			h.status[field] = zero
		}
	}
}

// operation returns status.operationHistory.<name>, creating it.
func (h bareMetalHost) operation(name string) map[string]interface{} {
	history, ok := h.status["operationHistory"].(map[string]interface{})
	if !ok {
		history = map[string]interface{}{}
		h.status["operationHistory"] = history
	}
	op, ok := history[name].(map[string]interface{})
	if !ok {
		op = map[string]interface{}{}
		history[name] = op
	}
	return op
}

// setOperation stamps the start or end of an operation now.
func (h bareMetalHost) setOperation(name, edge string) {
	h.operation(name)[edge] = now()
}

// hardwareProfile is the operator's (deprecated) profile choice: the
// spec's, else libvirt for libvirt BMCs, else "unknown".
func (h bareMetalHost) hardwareProfile() string {
	if p := h.specString("hardwareProfile"); p != "" {
		return p
	}
	if strings.HasPrefix(h.specString("bmc", "address"), "libvirt") {
		return "libvirt"
	}
	return "unknown"
}

// setRootDeviceHints stores the spec's root device hints, else those of
// the hardware profile, as the operator does.
func (h bareMetalHost) setRootDeviceHints() {
	if hints, ok, _ := unstructured.NestedMap(h.obj.Object, "spec", "rootDeviceHints"); ok {
		h.provisioning()["rootDeviceHints"] = hints
		return
	}
	var hints map[string]interface{}
	switch h.hardwareProfile() {
	case "empty":
	case "libvirt":
		hints = map[string]interface{}{"deviceName": "/dev/vda"}
	case "openstack":
		hints = map[string]interface{}{"deviceName": "/dev/vdb"}
	case "dell":
		hints = map[string]interface{}{"hctl": "0:0:0:0"}
	case "dell-raid":
		hints = map[string]interface{}{"hctl": "0:2:0:0"}
	default:
		hints = map[string]interface{}{"deviceName": "/dev/sda"}
	}
	if hints == nil {
		delete(h.provisioning(), "rootDeviceHints")
		return
	}
	h.provisioning()["rootDeviceHints"] = hints
}

// specImage is spec.image, or nil without a URL.
func (h bareMetalHost) specImage() map[string]interface{} {
	image, ok, _ := unstructured.NestedMap(h.obj.Object, "spec", "image")
	if !ok {
		return nil
	}
	if url, _ := image["url"].(string); url == "" {
		return nil
	}
	return image
}

func (h bareMetalHost) statusImageURL() string {
	url, _, _ := unstructured.NestedString(h.status, "provisioning", "image", "url")
	return url
}

// needsProvisioning: the operator provisions an online host with an image
// it has not provisioned (a consumerRef is not needed).
func (h bareMetalHost) needsProvisioning() bool {
	return h.online() && h.specImage() != nil && h.statusImageURL() == ""
}

// provisioningCancelled: the image was removed or replaced.
func (h bareMetalHost) provisioningCancelled() bool {
	image := h.specImage()
	return image == nil || image["url"] != h.statusImageURL()
}

func (h bareMetalHost) startProvisioning() {
	p := h.provisioning()
	p["image"] = h.specImage()
	h.setRootDeviceHints()
	mode := h.specString("bootMode")
	if mode == "" {
		mode = "UEFI"
	}
	p["bootMode"] = mode
	h.setOperation("provision", "start")
	delete(h.operation("provision"), "end")
	h.setProvisioning(BareMetalStateProvisioning)
}

// managePower brings poweredOn one step towards spec.online; on a
// provisioned host, a reboot annotation keeps it off (until the stand-in
// removes the plain one, see sync; reboot.metal3.io/<key> ones stay until
// their owner removes them).
func (h bareMetalHost) managePower(provisioned bool) {
	want := h.online()
	if provisioned {
		for k := range h.obj.GetAnnotations() {
			if k == BareMetalRebootAnnotation || strings.HasPrefix(k, BareMetalRebootAnnotation+"/") {
				want = false
			}
		}
	}
	h.status["poweredOn"] = want
}

// bareMetalHardware is the inventory the stand-in's inspection finds on a
// host, made up from its name (the same name, the same hardware), with
// bootMAC as the first NIC's address. The addresses are of 192.0.2.0/24
// (TEST-NET-1): documentation, never reached.
func bareMetalHardware(name, bootMAC string) map[string]interface{} {
	f := fnv.New32a()
	_, _ = f.Write([]byte(name))
	sum := f.Sum32()
	cpus := []int64{16, 32, 48, 64}[sum%4]
	ramMiB := []int64{65536, 131072, 262144, 524288}[(sum>>2)%4]
	octet := 1 + (sum>>4)%254
	if bootMAC == "" {
		bootMAC = fmt.Sprintf("02:00:%02x:%02x:%02x:00", byte(sum>>24), byte(sum>>16), byte(sum>>8))
	}
	nics := []interface{}{map[string]interface{}{
		"name": "eno1", "model": "0x8086 0x1572", "mac": bootMAC, "ip": fmt.Sprintf("192.0.2.%d", octet),
		"speedGbps": int64(25), "pxe": true,
	}}
	storage := []interface{}{map[string]interface{}{
		"name": "/dev/sda", "hctl": "0:0:0:0", "type": "SSD", "sizeBytes": int64(960197124096),
		"vendor": "ATA", "model": "SSD 960GB", "serialNumber": fmt.Sprintf("S%08X", sum),
	}}
	if sum&(1<<12) != 0 {
		nics = append(nics, map[string]interface{}{
			"name": "eno2", "model": "0x8086 0x1572", "mac": fmt.Sprintf("02:00:%02x:%02x:%02x:01", byte(sum>>24), byte(sum>>16), byte(sum>>8)),
			"ip": fmt.Sprintf("192.0.2.%d", 1+(octet+127)%254), "speedGbps": int64(25),
		})
		storage = append(storage, map[string]interface{}{
			"name": "/dev/sdb", "hctl": "0:0:1:0", "type": "HDD", "rotational": true, "sizeBytes": int64(4000787030016),
			"vendor": "ATA", "model": "HDD 4TB", "serialNumber": fmt.Sprintf("H%08X", sum),
		})
	}
	return map[string]interface{}{
		"systemVendor": map[string]interface{}{"manufacturer": "Stand-in Systems", "productName": "SI-1000", "serialNumber": fmt.Sprintf("SN%08X", sum)},
		"firmware":     map[string]interface{}{"bios": map[string]interface{}{"vendor": "Stand-in Systems", "version": "1.0.0", "date": "01/01/2025"}},
		"cpu": map[string]interface{}{
			"arch": "x86_64", "model": "Stand-in x86_64 CPU", "clockMegahertz": float64(2600), "count": cpus,
			"flags": []interface{}{"aes", "avx2", "vmx"},
		},
		"ramMebibytes": ramMiB,
		"nics":         nics,
		"storage":      storage,
		"hostname":     name,
	}
}

// now is a timestamp as status holds one.
func now() string { return metav1.Now().UTC().Format(time.RFC3339) }

// CreateDemoBareMetalHosts registers n servers in namespace as the
// provider would (creating the namespace if missing): BareMetalHosts
// server-001... with a Redfish BMC at 192.0.2.<i> (TEST-NET-1, never
// reached), a boot MAC address, the labels labels(i) (labels may be nil)
// and, each, a credentials Secret server-<i>-bmc. Objects that exist are
// left as they are. n is at most 254.
func CreateDemoBareMetalHosts(ctx context.Context, client dynamic.Interface, namespace string, n int, labels func(i int) map[string]string) error {
	if n < 0 || n > 254 {
		return fmt.Errorf("demo BareMetalHosts: n must be within 0..254, got %d", n)
	}
	create := func(gvr schema.GroupVersionResource, obj map[string]interface{}) error {
		u := &unstructured.Unstructured{Object: obj}
		var err error
		if u.GetNamespace() == "" {
			_, err = client.Resource(gvr).Create(ctx, u, metav1.CreateOptions{})
		} else {
			_, err = client.Resource(gvr).Namespace(namespace).Create(ctx, u, metav1.CreateOptions{})
		}
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating %s %s: %w", gvr.Resource, u.GetName(), err)
		}
		return nil
	}
	ns := map[string]interface{}{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]interface{}{"name": namespace}}
	if err := create(corev1.SchemeGroupVersion.WithResource("namespaces"), ns); err != nil {
		return err
	}
	var errs []error
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("server-%03d", i)
		secret := map[string]interface{}{
			"apiVersion": "v1", "kind": "Secret",
			"metadata":   map[string]interface{}{"name": name + "-bmc", "namespace": namespace},
			"type":       string(corev1.SecretTypeOpaque),
			"stringData": map[string]interface{}{"username": "admin", "password": fmt.Sprintf("bmc-%s", name)},
		}
		if err := create(corev1.SchemeGroupVersion.WithResource("secrets"), secret); err != nil {
			errs = append(errs, err)
			continue
		}
		meta := map[string]interface{}{"name": name, "namespace": namespace}
		if labels != nil {
			if l := labels(i); len(l) > 0 {
				m := map[string]interface{}{}
				for k, v := range l {
					m[k] = v
				}
				meta["labels"] = m
			}
		}
		host := map[string]interface{}{
			"apiVersion": BareMetalHostResource.GroupVersion().String(), "kind": "BareMetalHost",
			"metadata": meta,
			"spec": map[string]interface{}{
				"online":         false,
				"bootMACAddress": fmt.Sprintf("02:00:00:00:00:%02x", i),
				"bmc": map[string]interface{}{
					"address":         fmt.Sprintf("redfish-virtualmedia://192.0.2.%d/redfish/v1/Systems/1", i),
					"credentialsName": name + "-bmc",
				},
			},
		}
		if err := create(BareMetalHostResource, host); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
