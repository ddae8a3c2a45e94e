package console

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"tenant.io/tenant-apiserver/test/integration/framework"
)

// window is one user's browser: a browser context of its own (its own
// cookies), and the tab the test drives.
type window struct {
	t    testing.TB
	user string
	ctx  context.Context
	base string
}

// openWindow opens a new browser context and signs user in.
func openWindow(t testing.TB, user string) *window {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browserCtx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	// The first Run creates the tab, which lives as long as the context
	// of that Run: not a timeout context.
	if err := chromedp.Run(ctx); err != nil {
		t.Fatal(err)
	}
	w := &window{t: t, user: user, ctx: ctx, base: framework.Current().ConsoleURL()}
	w.signIn(framework.Current().Token(user))
	return w
}

// tab opens another tab in the same browser context: the same session.
func (w *window) tab() *window {
	w.t.Helper()
	ctx, cancel := chromedp.NewContext(w.ctx)
	w.t.Cleanup(cancel)
	if err := chromedp.Run(ctx); err != nil {
		w.t.Fatal(err)
	}
	return &window{t: w.t, user: w.user, ctx: ctx, base: w.base}
}

// run runs actions, failing the test after a minute.
func (w *window) run(actions ...chromedp.Action) {
	w.t.Helper()
	if err := w.tryRun(time.Minute, actions...); err != nil {
		w.t.Fatalf("%s's browser: %v", w.user, err)
	}
}

func (w *window) tryRun(d time.Duration, actions ...chromedp.Action) error {
	ctx, cancel := context.WithTimeout(w.ctx, d)
	defer cancel()
	return chromedp.Run(ctx, actions...)
}

// signIn signs in with token through the sign-in form, typing it.
func (w *window) signIn(token string) {
	w.t.Helper()
	w.run(
		chromedp.Navigate(w.base+"/signin"),
		chromedp.WaitVisible("#token", chromedp.ByID),
		chromedp.SendKeys("#token", token, chromedp.ByID),
	)
	w.markPage()
	w.run(chromedp.Submit("#token", chromedp.ByID))
	w.waitNewPage()
}

// waitNewPage waits until the page marked by markPage has been replaced
// by a new one, fully loaded.
func (w *window) waitNewPage() {
	w.t.Helper()
	w.waitFor("the next page", `window.__notReloaded === undefined && document.readyState === "complete" && document.querySelector("main h1") !== null`, time.Minute)
}

// open loads a page and waits until it has rendered.
func (w *window) open(path string) {
	w.t.Helper()
	w.run(chromedp.Navigate(w.base+path), chromedp.WaitVisible("main h1", chromedp.ByQuery))
}

// eval evaluates a JavaScript expression into out.
func (w *window) eval(expr string, out any) {
	w.t.Helper()
	w.run(chromedp.Evaluate(expr, out))
}

// text is the text of the first element matching a CSS selector, "" when
// there is none.
func (w *window) text(sel string) string {
	w.t.Helper()
	var s string
	w.eval(`(function(){var e=document.querySelector(`+jsString(sel)+`);return e?e.textContent.trim():""})()`, &s)
	return s
}

// html is the inner HTML of the first element matching sel.
func (w *window) html(sel string) string {
	w.t.Helper()
	var s string
	w.eval(`(function(){var e=document.querySelector(`+jsString(sel)+`);return e?e.innerHTML:""})()`, &s)
	return s
}

// waitFor evaluates a JavaScript expression until it is truthy. A page
// navigating meanwhile makes an evaluation fail; it is tried again.
func (w *window) waitFor(what, expr string, d time.Duration) {
	w.t.Helper()
	deadline := time.Now().Add(d)
	var lastErr error
	for {
		var ok bool
		lastErr = w.tryRun(5*time.Second, chromedp.Evaluate(`!!(`+expr+`)`, &ok))
		if lastErr == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	w.screenshot("failed-" + strings.ReplaceAll(w.t.Name(), "/", "-"))
	w.t.Fatalf("%s's browser: waiting %s for %s (last error: %v)\npage: %s", w.user, d, what, lastErr, w.text("main"))
}

// cell is the expression of a live table's cell: column col (1-based) of
// the row with data-key key.
func cell(table, key string, col int) string {
	return `(function(){var c=document.querySelector('#` + table + `-table tr[data-key="` + key + `"] td:nth-child(` + itoa(col) + `)');return c?c.textContent.trim():""})()`
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// markPage puts a marker on the page that a reload would remove.
func (w *window) markPage() {
	w.t.Helper()
	w.eval(`window.__notReloaded = true`, nil)
}

// stillSamePage fails the test when the page was reloaded since markPage.
func (w *window) stillSamePage(what string) {
	w.t.Helper()
	var same bool
	w.eval(`window.__notReloaded === true`, &same)
	if !same {
		w.t.Fatalf("%s: the page was reloaded; it should have updated live", what)
	}
}

// fill sets a form's fields by name and submits it the way a browser
// does (requestSubmit runs the form's validation and submit events), then
// waits for the page that answers.
func (w *window) fill(form string, values map[string]string) {
	w.t.Helper()
	b, _ := json.Marshal(values)
	w.markPage()
	w.run(chromedp.Evaluate(`(function(){var f=document.getElementById(`+jsString(form)+`);var v=`+string(b)+`;
for (var k in v) { var e=f.elements[k]; if (e.type==="checkbox") { e.checked = v[k] !== ""; } else { e.value = v[k]; } }
f.requestSubmit(); return true})()`, nil))
	w.waitNewPage()
}

// errorCode is the status of the API error the page shows, 0 for none.
func (w *window) errorCode() int {
	w.t.Helper()
	var code int
	w.eval(`(function(){var e=document.getElementById("api-error");return e?Number(e.dataset.code):0})()`, &code)
	return code
}

// screenshot saves the page under _output/console/screenshots.
func (w *window) screenshot(name string) {
	w.t.Helper()
	dir, err := screenshotDir()
	if err != nil {
		w.t.Logf("screenshot %s: %v", name, err)
		return
	}
	var png []byte
	if err := w.tryRun(30*time.Second, chromedp.FullScreenshot(&png, 100)); err != nil {
		w.t.Logf("screenshot %s: %v", name, err)
		return
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		w.t.Logf("screenshot %s: %v", name, err)
	}
}

// cookies are the browser's cookies for the console.
func (w *window) cookies() []*network.Cookie {
	w.t.Helper()
	var cs []*network.Cookie
	w.run(chromedp.ActionFunc(func(ctx context.Context) error {
		var err error
		cs, err = network.GetCookies().WithURLs([]string{w.base}).Do(ctx)
		return err
	}))
	return cs
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
