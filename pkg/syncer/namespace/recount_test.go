package namespace

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"tenant.io/tenant-apiserver/pkg/syncer/quotausage"
)

// rq is a ResourceQuota of namespace "x" whose spec.hard is hard, whose
// status.hard is statusHard and whose usage is used.
func rq(hard, statusHard, used corev1.ResourceList) *corev1.ResourceQuota {
	return &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Namespace: "x", Name: "q"},
		Spec:       corev1.ResourceQuotaSpec{Hard: hard},
		Status:     corev1.ResourceQuotaStatus{Hard: statusHard, Used: used},
	}
}

func TestDrops(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	four, three := list("pods", "4"), list("pods", "3")
	countedPods := func(d *drops, reported corev1.ResourceList, now time.Time) int64 {
		t.Helper()
		u, _ := d.counted(quotausage.Usage{"x": reported, "y": list("pods", "1")}, now)
		used := u["x"]
		return used.Pods().Value()
	}

	var d drops
	// Admissions charge: usage only grows, nothing is held.
	if d.observe(rq(four, four, list("pods", "1")), rq(four, four, list("pods", "2")), at(0)) || d.pending("x") {
		t.Fatal("a growing usage is held")
	}
	// A recount that lowers it (a pod deleted, or an undercount): held.
	d.observe(rq(four, four, list("pods", "2")), rq(four, four, list("pods", "1")), at(time.Second))
	if !d.pending("x") || countedPods(&d, list("pods", "1"), at(time.Second)) != 2 {
		t.Fatal("a drop is believed before a recount shows it")
	}
	// The lower share written (spec.hard 3), the recount that follows
	// lowers the usage again: another drop, still held at the highest.
	if d.observe(rq(three, four, list("pods", "1")), rq(three, three, list("pods", "0")), at(2*time.Second)) {
		t.Error("a recount that lowers the usage again confirms the drop")
	}
	if got := countedPods(&d, list("pods", "0"), at(2*time.Second)); got != 2 {
		t.Errorf("after a second drop, counted %d pods, want the 2 held", got)
	}
	// An admission's charge (status.hard unchanged) confirms nothing.
	if d.observe(rq(three, three, list("pods", "0")), rq(three, three, list("pods", "1")), at(3*time.Second)) || !d.pending("x") {
		t.Error("an admission's charge confirms the drop")
	}
	// The recount of the next share change that leaves the usage as it is:
	// believed.
	if !d.observe(rq(list("pods", "2"), three, list("pods", "1")), rq(list("pods", "2"), list("pods", "2"), list("pods", "1")), at(4*time.Second)) || d.pending("x") {
		t.Error("a recount that shows the same usage does not confirm the drop")
	}
	if got := countedPods(&d, list("pods", "1"), at(4*time.Second)); got != 1 {
		t.Errorf("a confirmed drop: counted %d pods, want 1", got)
	}

	// A drop undone by the next recount (an undercount corrected).
	d.observe(rq(four, four, list("pods", "3")), rq(four, four, list("pods", "2")), at(10*time.Second))
	if !d.observe(rq(four, four, list("pods", "2")), rq(four, four, list("pods", "3")), at(11*time.Second)) || d.pending("x") {
		t.Error("a usage back at what was held still holds it")
	}

	// No recount at all: believed after DropBelievedAfter.
	d.observe(rq(four, four, list("pods", "3")), rq(four, four, list("pods", "2")), at(20*time.Second))
	if _, next := d.counted(quotausage.Usage{"x": list("pods", "2")}, at(20*time.Second+time.Second)); next != DropBelievedAfter-time.Second {
		t.Errorf("the drop is believed in %s, want %s", next, DropBelievedAfter-time.Second)
	}
	if got := countedPods(&d, list("pods", "2"), at(20*time.Second+DropBelievedAfter)); got != 2 || d.pending("x") {
		t.Errorf("after DropBelievedAfter: counted %d pods, want the 2 reported", got)
	}

	// Forgotten with its ResourceQuota.
	d.observe(rq(four, four, list("pods", "3")), rq(four, four, list("pods", "2")), at(time.Hour))
	d.forget("x")
	if d.pending("x") {
		t.Error("a drop outlives its ResourceQuota")
	}
}
