package console

import (
	"bytes"
	"errors"
	"net/http"
	"net/url"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
)

// page is what every page template gets.
type page struct {
	Title string
	// Nav is the active navigation entry.
	Nav    string
	Caller *caller
	CSRF   string
	// Error is the API's refusal of what the user just did, or of
	// reading the page.
	Error *apiError
	// Form holds the values a refused form was sent with.
	Form formValues
	// Notice is a one-line success message.
	Notice string
	Data   any
}

// formValues are a submitted form's values.
type formValues url.Values

// Get returns a form value.
func (f formValues) Get(name string) string { return url.Values(f).Get(name) }

// apiError is an API error as the user is shown it: the status, the
// message, field errors by form field, and the other causes as a list.
type apiError struct {
	Code    int
	Reason  string
	Message string
	// Fields are the causes whose field a form field shows, by form field.
	Fields map[string][]string
	// Causes are the other causes: a 409's blockers, fields no form
	// field shows.
	Causes []string
}

// newAPIError turns err into what the page shows; fields maps API field
// paths (by prefix, e.g. "spec.subnets") to form field names.
func newAPIError(err error, fields map[string]string) *apiError {
	e := &apiError{Code: http.StatusInternalServerError, Message: err.Error(), Fields: map[string][]string{}}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return e
	}
	st := status.Status()
	e.Code, e.Reason, e.Message = int(st.Code), string(st.Reason), st.Message
	if e.Code == 0 {
		e.Code = http.StatusInternalServerError
	}
	if st.Details == nil {
		return e
	}
	prefixes := make([]string, 0, len(fields))
	for p := range fields {
		prefixes = append(prefixes, p)
	}
	// The longest prefix wins.
	sort.Slice(prefixes, func(i, j int) bool { return len(prefixes[i]) > len(prefixes[j]) })
	for _, c := range st.Details.Causes {
		placed := false
		for _, p := range prefixes {
			if c.Field == p || strings.HasPrefix(c.Field, p+".") || strings.HasPrefix(c.Field, p+"[") {
				e.Fields[fields[p]] = append(e.Fields[fields[p]], c.Field+": "+c.Message)
				placed = true
				break
			}
		}
		if !placed {
			line := c.Message
			if c.Field != "" && !strings.Contains(c.Message, c.Field) {
				line = c.Field + ": " + c.Message
			}
			e.Causes = append(e.Causes, line)
		}
	}
	return e
}

// render writes a page; a template failure is a 500 without a half-written
// page.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, name string, p *page) {
	t := s.pages[name]
	if t == nil {
		http.Error(w, "no page "+name, http.StatusInternalServerError)
		return
	}
	if p.Caller == nil {
		if c, ok := r.Context().Value(callerKey{}).(*caller); ok {
			p.Caller = c
		}
	}
	if p.CSRF == "" && p.Caller != nil {
		p.CSRF = p.Caller.CSRF
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", p); err != nil {
		klog.ErrorS(err, "Rendering a page", "page", name)
		http.Error(w, "Internal error rendering the page", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// renderError shows an API error as a page of its own, with its status.
func (s *Server) renderError(w http.ResponseWriter, r *http.Request, c *caller, err error) {
	e := newAPIError(err, nil)
	s.render(w, r, e.Code, "error", &page{Title: http.StatusText(e.Code), Caller: c, Error: e})
}
