package namespace

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"

	"tenant.io/tenant-apiserver/pkg/syncer/quotausage"
)

// A ResourceQuota's usage goes down only when kube-controller-manager
// recounts it: after a pod is deleted or finishes, or on the controller's
// full resync. A recount that races an admission in the namespace (the
// admission has charged the quota; the controller's informer has not seen
// the pod yet) also goes down, below the truth, and nothing corrects it
// until the next full resync. Were the shares computed from such a count,
// every namespace of the tenant would be handed the missing amount as
// free: a tenant with N namespaces could exceed its total by N times the
// undercount until the resync.
//
// So a drop of a namespace's usage is not believed until a later recount
// shows it. Until then, what is free of the tenant's total is computed
// with the usage the namespace had before the drop, and the namespace's
// own share is what it reports plus that free amount: lower than before,
// which the syncer writes at once. That change of spec.hard is what makes
// the controller recount the namespace. A recount that does not lower the
// usage again confirms the drop (a pod was deleted; its room is handed out
// then), or corrects the undercount. A recount that lowers it again (it
// raced another admission) is a new drop and is not believed either.
//
// Failing any recount, a drop is believed after DropBelievedAfter. No
// recount comes when the lower share is the one already written (drops
// in a row as pods are deleted in several namespaces can leave it so). An
// undercount's lower share is below the share written from the count
// before it by what the drop took, so its recount comes, and well within
// this time.
const DropBelievedAfter = 5 * time.Second

// drops holds, by host namespace, the usage a namespace reported before a
// drop that no recount has confirmed yet.
type drops struct {
	mu sync.Mutex
	ns map[string]*drop
}

type drop struct {
	held  corev1.ResourceList // per resource, the highest usage before a drop
	since time.Time
}

// observe records the update of host namespace ns's ResourceQuota from old
// to cur, seen at now. It returns whether the usage the shares are
// computed from changed other than through cur's status.used (a drop
// confirmed or given up on, the only way spec.hard alone changes it).
func (d *drops) observe(old, cur *corev1.ResourceQuota, now time.Time) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	ns := cur.Namespace
	e := d.ns[ns]
	lowered := corev1.ResourceList{}
	for r, q := range cur.Status.Used {
		if before, ok := old.Status.Used[r]; ok && q.Cmp(before) < 0 {
			lowered[r] = before
		}
	}
	if len(lowered) > 0 {
		if e == nil {
			if d.ns == nil {
				d.ns = map[string]*drop{}
			}
			e = &drop{held: corev1.ResourceList{}, since: now}
			d.ns[ns] = e
		}
		for r, q := range lowered {
			if h, ok := e.held[r]; !ok || q.Cmp(h) > 0 {
				e.held[r] = q
			}
		}
		return false
	}
	if e == nil {
		return false
	}
	recounted := !apiequality.Semantic.DeepEqual(old.Status.Hard, cur.Status.Hard) &&
		apiequality.Semantic.DeepEqual(cur.Status.Hard, cur.Spec.Hard)
	if recounted || now.Sub(e.since) >= DropBelievedAfter || covers(cur.Status.Used, e.held) {
		delete(d.ns, ns)
		return true
	}
	return false
}

// covers says whether used is at least held in every resource held.
func covers(used, held corev1.ResourceList) bool {
	for r, h := range held {
		if q, ok := used[r]; ok && q.Cmp(h) < 0 {
			return false
		}
	}
	return true
}

// forget drops ns (its ResourceQuota is gone).
func (d *drops) forget(ns string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.ns, ns)
}

// pending says whether a drop of ns's usage awaits a recount.
func (d *drops) pending(ns string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.ns[ns]
	return ok
}

// counted returns the usage the free amount of a tenant's total is
// computed from: reported, with every unconfirmed drop replaced by the
// usage before it. It also returns how long until the first of those drops
// is believed anyway (0: none pending).
func (d *drops) counted(reported quotausage.Usage, now time.Time) (quotausage.Usage, time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out quotausage.Usage
	var next time.Duration
	for ns, used := range reported {
		e := d.ns[ns]
		if e == nil {
			continue
		}
		left := e.since.Add(DropBelievedAfter).Sub(now)
		if left <= 0 {
			delete(d.ns, ns)
			continue
		}
		if next == 0 || left < next {
			next = left
		}
		if out == nil {
			out = make(quotausage.Usage, len(reported))
			for k, v := range reported {
				out[k] = v
			}
		}
		held := make(corev1.ResourceList, len(used))
		for r, q := range used {
			held[r] = q
			if h, ok := e.held[r]; ok && h.Cmp(q) > 0 {
				held[r] = h
			}
		}
		out[ns] = held
	}
	if out == nil {
		return reported, next
	}
	return out, next
}
