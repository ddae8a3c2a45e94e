package authzcache

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	clocktesting "k8s.io/utils/clock/testing"
)

// host is an authorizer standing in for the host's SubjectAccessReviews:
// it allows what allowed says, counts the questions, and can hold them.
type host struct {
	mu      sync.Mutex
	allowed map[string]bool // user -> allowed
	fail    error
	asked   int
	hold    chan struct{} // when set, each question waits for it
	started chan struct{} // when set, receives one value per question
}

func (h *host) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	h.mu.Lock()
	h.asked++
	hold, started := h.hold, h.started
	h.mu.Unlock()
	if started != nil {
		started <- struct{}{}
	}
	if hold != nil {
		<-hold
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fail != nil {
		return authorizer.DecisionNoOpinion, "", h.fail
	}
	if h.allowed[a.GetUser().GetName()] {
		return authorizer.DecisionAllow, "bound", nil
	}
	return authorizer.DecisionNoOpinion, "not bound", nil
}

func (h *host) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.asked
}

func (h *host) set(f func(h *host)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f(h)
}

func create(userName, name string) authorizer.AttributesRecord {
	return authorizer.AttributesRecord{
		User: &user.DefaultInfo{Name: userName, Groups: []string{"system:authenticated"}},
		Verb: "create", APIGroup: "tenant.io", APIVersion: "v1alpha1", Resource: "namespaces", Name: name,
		ResourceRequest: true,
	}
}

// waitAsked waits until h was asked n times: background reviews run in
// goroutines of their own.
func waitAsked(t *testing.T, h *host, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for h.count() < n {
		if time.Now().After(deadline) {
			t.Fatalf("host asked %d times, want %d", h.count(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func authorize(t *testing.T, c *Cache, a authorizer.Attributes, want authorizer.Decision) {
	t.Helper()
	d, _, err := c.Authorize(context.Background(), a)
	if err != nil {
		t.Fatalf("Authorize: %v", err)
	}
	if d != want {
		t.Fatalf("decision %v, want %v", d, want)
	}
}

func TestCacheKeepsAllowedAnswersForTheTTL(t *testing.T) {
	h := &host{allowed: map[string]bool{"alice": true}}
	clock := clocktesting.NewFakeClock(time.Now())
	c := newWithClock(h, 10*time.Second, DefaultSize, clock)

	authorize(t, c, create("alice", ""), authorizer.DecisionAllow)
	authorize(t, c, create("alice", ""), authorizer.DecisionAllow)
	if h.count() != 1 {
		t.Fatalf("host asked %d times for one question within the TTL, want 1", h.count())
	}
	// Another name, another user: other questions.
	authorize(t, c, create("alice", "ns1"), authorizer.DecisionAllow)
	authorize(t, c, create("bob", ""), authorizer.DecisionNoOpinion)
	authorize(t, c, create("bob", ""), authorizer.DecisionNoOpinion)
	if h.count() != 4 {
		t.Fatalf("host asked %d times, want 4 (answers other than allowed are not kept)", h.count())
	}
	// An answer not used in the last quarter of its TTL expires at the TTL.
	clock.Step(10 * time.Second)
	clock.Step(time.Millisecond)
	authorize(t, c, create("alice", "ns1"), authorizer.DecisionAllow)
	if h.count() != 5 {
		t.Fatalf("host asked %d times, want 5 (an expired answer is asked for again)", h.count())
	}
}

func TestCacheRefreshesBeforeExpiry(t *testing.T) {
	h := &host{allowed: map[string]bool{"alice": true}}
	clock := clocktesting.NewFakeClock(time.Now())
	c := newWithClock(h, 10*time.Second, DefaultSize, clock)

	authorize(t, c, create("alice", ""), authorizer.DecisionAllow)
	clock.Step(4 * time.Second)
	authorize(t, c, create("alice", ""), authorizer.DecisionAllow)
	if h.count() != 1 {
		t.Fatalf("host asked %d times before three quarters of the TTL, want 1", h.count())
	}
	// Three quarters of the TTL old: the request is answered from memory,
	// and the host is asked again behind it.
	h.set(func(h *host) { h.hold = make(chan struct{}) })
	clock.Step(4 * time.Second)
	authorize(t, c, create("alice", ""), authorizer.DecisionAllow)
	waitAsked(t, h, 2)
	// One review at a time per question.
	authorize(t, c, create("alice", ""), authorizer.DecisionAllow)
	if h.count() != 2 {
		t.Fatalf("host asked %d times with a review in flight, want 2", h.count())
	}
	h.set(func(h *host) { close(h.hold); h.hold = nil })
	// The refreshed answer is good for a TTL from when it was asked.
	deadline := time.Now().Add(10 * time.Second)
	for {
		v, ok := c.entries.Get(mustKey(t, create("alice", "")))
		if ok && v.(entry).asked.Equal(clock.Now()) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("refreshed answer not kept")
		}
		time.Sleep(time.Millisecond)
	}
	clock.Step(9 * time.Second)
	h.set(func(h *host) { h.hold = make(chan struct{}) }) // a refresh starts again; keep it waiting
	authorize(t, c, create("alice", ""), authorizer.DecisionAllow)
	waitAsked(t, h, 3)
	h.set(func(h *host) { close(h.hold); h.hold = nil })
	if h.count() != 3 {
		t.Fatalf("host asked %d times, want 3", h.count())
	}
}

func TestCacheRevocationTakesEffect(t *testing.T) {
	h := &host{allowed: map[string]bool{"alice": true}}
	clock := clocktesting.NewFakeClock(time.Now())
	c := newWithClock(h, 10*time.Second, DefaultSize, clock)

	authorize(t, c, create("alice", ""), authorizer.DecisionAllow)
	h.set(func(h *host) { h.allowed["alice"] = false })
	// The kept answer is used, as the generic cache would use it; at three
	// quarters of its TTL a refresh finds the permission gone.
	clock.Step(8 * time.Second)
	authorize(t, c, create("alice", ""), authorizer.DecisionAllow)
	waitAsked(t, h, 2)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, ok := c.entries.Get(mustKey(t, create("alice", ""))); !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("revoked answer still kept")
		}
		time.Sleep(time.Millisecond)
	}
	authorize(t, c, create("alice", ""), authorizer.DecisionNoOpinion)
}

func TestCacheKeepsNoErrorsAndExpiresOnTimeWhenTheHostFails(t *testing.T) {
	h := &host{allowed: map[string]bool{"alice": true}}
	clock := clocktesting.NewFakeClock(time.Now())
	c := newWithClock(h, 10*time.Second, DefaultSize, clock)

	authorize(t, c, create("alice", ""), authorizer.DecisionAllow)
	h.set(func(h *host) { h.fail = errors.New("host unreachable") })
	clock.Step(8 * time.Second)
	authorize(t, c, create("alice", ""), authorizer.DecisionAllow) // refresh fails in the background
	waitAsked(t, h, 2)
	clock.Step(2*time.Second + time.Millisecond)
	if _, _, err := c.Authorize(context.Background(), create("alice", "")); err == nil {
		t.Fatal("an answer past its TTL was used while the host fails")
	}
	if _, _, err := c.Authorize(context.Background(), create("alice", "")); err == nil {
		t.Fatal("an error was kept as an answer")
	}
	if h.count() < 4 {
		t.Fatalf("host asked %d times, want every failed question asked again", h.count())
	}
}

func TestCacheSharesOneReviewAmongConcurrentMisses(t *testing.T) {
	h := &host{allowed: map[string]bool{"alice": true}, hold: make(chan struct{}), started: make(chan struct{}, 100)}
	c := New(h, 10*time.Second, DefaultSize)

	const n = 20
	var wg sync.WaitGroup
	decisions := make(chan authorizer.Decision, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, _, _ := c.Authorize(context.Background(), create("alice", ""))
			decisions <- d
		}()
	}
	<-h.started
	// Let the others reach the review in flight.
	time.Sleep(50 * time.Millisecond)
	h.set(func(h *host) { close(h.hold); h.hold = nil })
	wg.Wait()
	close(decisions)
	for d := range decisions {
		if d != authorizer.DecisionAllow {
			t.Fatalf("decision %v, want allow", d)
		}
	}
	if h.count() != 1 {
		t.Fatalf("host asked %d times for %d concurrent equal questions, want 1", h.count(), n)
	}
}

func TestCacheWaiterGivesUpWithItsRequest(t *testing.T) {
	h := &host{allowed: map[string]bool{"alice": true}, hold: make(chan struct{})}
	c := New(h, 10*time.Second, DefaultSize)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if d, _, err := c.Authorize(ctx, create("alice", "")); err == nil || d == authorizer.DecisionAllow {
		t.Fatalf("Authorize after the request ended: %v, %v; want an error", d, err)
	}
	// The review goes on for the requests that come next.
	h.set(func(h *host) { close(h.hold); h.hold = nil })
	authorize(t, c, create("alice", ""), authorizer.DecisionAllow)
	if h.count() != 1 {
		t.Fatalf("host asked %d times, want 1", h.count())
	}
}

func TestCachePassesSelectorsAndZeroTTLThrough(t *testing.T) {
	h := &host{allowed: map[string]bool{"alice": true}}
	c := New(h, 10*time.Second, DefaultSize)
	req, err := fields.ParseSelector("spec.tenant=t1")
	if err != nil {
		t.Fatal(err)
	}
	list := create("alice", "")
	list.Verb = "list"
	list.FieldSelectorRequirements = req.Requirements()
	authorize(t, c, list, authorizer.DecisionAllow)
	authorize(t, c, list, authorizer.DecisionAllow)
	if h.count() != 2 {
		t.Fatalf("host asked %d times for a question with a field selector, want 2", h.count())
	}

	off := New(h, 0, DefaultSize)
	authorize(t, off, create("alice", ""), authorizer.DecisionAllow)
	authorize(t, off, create("alice", ""), authorizer.DecisionAllow)
	if h.count() != 4 {
		t.Fatalf("host asked %d times with a TTL of 0, want 4", h.count())
	}
}

func TestKeyTellsQuestionsApart(t *testing.T) {
	base := create("alice", "ns1")
	variants := map[string]func(a *authorizer.AttributesRecord){
		"user": func(a *authorizer.AttributesRecord) {
			a.User = &user.DefaultInfo{Name: "bob", Groups: []string{"system:authenticated"}}
		},
		"groups": func(a *authorizer.AttributesRecord) {
			a.User = &user.DefaultInfo{Name: "alice", Groups: []string{"admins"}}
		},
		"uid": func(a *authorizer.AttributesRecord) {
			a.User = &user.DefaultInfo{Name: "alice", UID: "1", Groups: []string{"system:authenticated"}}
		},
		"extra": func(a *authorizer.AttributesRecord) {
			a.User = &user.DefaultInfo{Name: "alice", Groups: []string{"system:authenticated"}, Extra: map[string][]string{"scopes": {"x"}}}
		},
		"verb":        func(a *authorizer.AttributesRecord) { a.Verb = "delete" },
		"namespace":   func(a *authorizer.AttributesRecord) { a.Namespace = "dev" },
		"group":       func(a *authorizer.AttributesRecord) { a.APIGroup = "" },
		"version":     func(a *authorizer.AttributesRecord) { a.APIVersion = "v1" },
		"resource":    func(a *authorizer.AttributesRecord) { a.Resource = "networks" },
		"subresource": func(a *authorizer.AttributesRecord) { a.Subresource = "status" },
		"name":        func(a *authorizer.AttributesRecord) { a.Name = "ns2" },
		"non-resource": func(a *authorizer.AttributesRecord) {
			a.ResourceRequest, a.Path = false, "/apis/tenant.io/v1alpha1/namespaces/ns1"
		},
	}
	k := mustKey(t, base)
	for what, change := range variants {
		v := base
		change(&v)
		if mustKey(t, v) == k {
			t.Errorf("a question with another %s has the same key", what)
		}
	}
}

func mustKey(t *testing.T, a authorizer.Attributes) string {
	t.Helper()
	k, ok := keyOf(a)
	if !ok {
		t.Fatalf("no key for %v", a)
	}
	return k
}
