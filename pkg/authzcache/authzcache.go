// Package authzcache keeps the host's "allowed" answers to tenant-apiserver's
// SubjectAccessReviews, refreshing them before they expire.
//
// Every request of a tenant member is authorized by the host (delegated
// authorization): a SubjectAccessReview, whose answer the generic server
// caches for --authorization-webhook-cache-authorized-ttl (10 s). A member
// who keeps working misses that cache once per TTL and per distinct request
// (verb, resource, name), and the request that misses waits for a host round
// trip, which under load is 100 ms or more, queued behind the host's other
// work. Concurrent misses of the same answer each ask the host.
//
// Cache answers the same questions with the same bound on staleness: an
// allowed answer is used for at most the TTL after the host gave it, as
// before. Once an answer is three quarters of the TTL old, the next request
// that uses it asks the host again in the background, so a question asked steadily is
// answered from memory, and a revoked permission stops being used within
// the TTL (plus one review's time) as it did. Concurrent requests that miss
// share one review. Denials and "no opinion" answers are not kept here (the
// generic server's own cache of them, --authorization-webhook-cache-
// unauthorized-ttl, is unchanged), nor are questions with field or label
// selectors, nor errors.
package authzcache

import (
	"context"
	"encoding/json"
	"time"

	"golang.org/x/sync/singleflight"
	utilcache "k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/utils/clock"
)

// DefaultSize is how many allowed answers are kept, least recently used
// first out: the generic webhook authorizer's size.
const DefaultSize = 8192

// refreshWindow: an answer in the last 1/refreshWindow of its TTL is
// refreshed when used. A later refresh asks the host less often (at half
// the TTL a question in steady use cost two reviews per TTL instead of one
// without this cache); the window must still be longer than a review takes
// under load (p99 0.9 s measured, against the 2.5 s of a 10 s TTL).
const refreshWindow = 4

// refreshTimeout bounds a background review.
const refreshTimeout = time.Minute

// Cache is an authorizer that keeps the allowed answers of another one.
type Cache struct {
	inner   authorizer.Authorizer
	ttl     time.Duration
	clock   clock.PassiveClock
	entries *utilcache.LRUExpireCache
	flight  singleflight.Group
}

var _ authorizer.Authorizer = &Cache{}

// entry is an allowed answer and when the question was asked.
type entry struct {
	reason string
	asked  time.Time
}

// New returns a Cache of inner's allowed answers, each used for at most ttl.
// inner must not cache allowed answers itself, or their age would add up.
func New(inner authorizer.Authorizer, ttl time.Duration, size int) *Cache {
	return newWithClock(inner, ttl, size, clock.RealClock{})
}

func newWithClock(inner authorizer.Authorizer, ttl time.Duration, size int, c clock.PassiveClock) *Cache {
	return &Cache{inner: inner, ttl: ttl, clock: c, entries: utilcache.NewLRUExpireCacheWithClock(size, c)}
}

// Authorize implements authorizer.Authorizer.
func (c *Cache) Authorize(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	key, ok := keyOf(a)
	if !ok || c.ttl <= 0 {
		lookups.WithLabelValues("uncached").Inc()
		return c.inner.Authorize(ctx, a)
	}
	if v, found := c.entries.Get(key); found {
		e := v.(entry)
		if c.clock.Since(e.asked) >= c.ttl-c.ttl/refreshWindow {
			c.refresh(ctx, key, a)
		}
		lookups.WithLabelValues("hit").Inc()
		return authorizer.DecisionAllow, e.reason, nil
	}
	lookups.WithLabelValues("miss").Inc()
	// The review is shared by every request asking the same question
	// meanwhile: it must not end with the first one's request. A review
	// that ended between the lookup above and this one has kept its
	// answer, which is not asked for again.
	ch := c.flight.DoChan(key, func() (interface{}, error) {
		if v, found := c.entries.Get(key); found {
			return answer{decision: authorizer.DecisionAllow, reason: v.(entry).reason}, nil
		}
		return c.ask(context.WithoutCancel(ctx), key, a), nil
	})
	select {
	case r := <-ch:
		ans := r.Val.(answer)
		return ans.decision, ans.reason, ans.err
	case <-ctx.Done():
		return authorizer.DecisionNoOpinion, "", ctx.Err()
	}
}

// answer is what inner said.
type answer struct {
	decision authorizer.Decision
	reason   string
	err      error
}

// ask asks inner and keeps an allowed answer; any other removes the kept
// one, so that a refresh that finds the permission gone takes effect at once.
func (c *Cache) ask(ctx context.Context, key string, a authorizer.Attributes) answer {
	asked := c.clock.Now()
	d, reason, err := c.inner.Authorize(ctx, a)
	switch {
	case err != nil:
		// An unreachable host ends nothing early: the kept answer, if
		// any, still expires at its time.
	case d == authorizer.DecisionAllow:
		c.entries.Add(key, entry{reason: reason, asked: asked}, c.ttl-c.clock.Since(asked))
	default:
		c.entries.Remove(key)
	}
	return answer{decision: d, reason: reason, err: err}
}

// refresh asks inner again in the background, once at a time per question.
func (c *Cache) refresh(ctx context.Context, key string, a authorizer.Attributes) {
	c.flight.DoChan(key, func() (interface{}, error) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refreshTimeout)
		defer cancel()
		ans := c.ask(ctx, key, a)
		switch {
		case ans.err != nil:
			refreshes.WithLabelValues("error").Inc()
		case ans.decision == authorizer.DecisionAllow:
			refreshes.WithLabelValues("allowed").Inc()
		default:
			refreshes.WithLabelValues("revoked").Inc()
		}
		return ans, nil
	})
}

// question is what a SubjectAccessReview asks: two requests with equal
// questions get equal answers.
type question struct {
	User        string              `json:"u"`
	UID         string              `json:"i,omitempty"`
	Groups      []string            `json:"g,omitempty"`
	Extra       map[string][]string `json:"e,omitempty"`
	IsResource  bool                `json:"r,omitempty"`
	Verb        string              `json:"v"`
	Namespace   string              `json:"n,omitempty"`
	APIGroup    string              `json:"ag,omitempty"`
	APIVersion  string              `json:"av,omitempty"`
	Resource    string              `json:"rs,omitempty"`
	Subresource string              `json:"s,omitempty"`
	Name        string              `json:"nm,omitempty"`
	Path        string              `json:"p,omitempty"`
}

// keyOf returns the key of a's question; false for a question this cache
// does not keep (one with selectors, or no user).
func keyOf(a authorizer.Attributes) (string, bool) {
	u := a.GetUser()
	if u == nil {
		return "", false
	}
	if fs, err := a.GetFieldSelector(); err != nil || len(fs) > 0 {
		return "", false
	}
	if ls, err := a.GetLabelSelector(); err != nil || len(ls) > 0 {
		return "", false
	}
	q := question{User: u.GetName(), UID: u.GetUID(), Groups: u.GetGroups(), Extra: u.GetExtra(),
		IsResource: a.IsResourceRequest(), Verb: a.GetVerb()}
	if q.IsResource {
		q.Namespace, q.APIGroup, q.APIVersion = a.GetNamespace(), a.GetAPIGroup(), a.GetAPIVersion()
		q.Resource, q.Subresource, q.Name = a.GetResource(), a.GetSubresource(), a.GetName()
	} else {
		q.Path = a.GetPath()
	}
	b, err := json.Marshal(q)
	if err != nil {
		return "", false
	}
	return string(b), true
}

var (
	lookups = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "tenant_authorization_cache",
		Name:           "lookups_total",
		Help:           "Authorization questions by how the cache of the host's allowed answers served them: hit, miss (asked the host, or waited for a review in flight) or uncached (questions with selectors).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"result"})
	refreshes = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "tenant_authorization_cache",
		Name:           "refreshes_total",
		Help:           "Background reviews of allowed answers three quarters of their TTL old, by result: allowed, revoked (the host no longer allows) or error.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"result"})
)

func init() {
	legacyregistry.MustRegister(lookups, refreshes)
}
