package plugin

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/yaml"
)

// PrintError writes err the way kubectl does; a refusal of the server names
// each of its causes on a line of its own (kubectl shows only the message).
func PrintError(w io.Writer, err error) {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		fmt.Fprintf(w, "error: %v\n", err)
		return
	}
	st := status.Status()
	fmt.Fprintf(w, "Error from server (%s): %s\n", st.Reason, st.Message)
	if st.Details == nil {
		return
	}
	for _, c := range st.Details.Causes {
		switch {
		case c.Field != "" && c.Message != "" && !strings.HasPrefix(c.Message, c.Field):
			fmt.Fprintf(w, "  %s: %s\n", c.Field, c.Message)
		case c.Message != "":
			fmt.Fprintf(w, "  %s\n", c.Message)
		}
	}
}

// printStructured writes v as JSON or YAML (format "json" or "yaml").
func printStructured(w io.Writer, format string, v any) error {
	switch format {
	case "json":
		b, err := json.MarshalIndent(v, "", "    ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	case "yaml":
		b, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	return fmt.Errorf("output %q is not json or yaml", format)
}

// table writes aligned columns, as kubectl's human output.
type table struct {
	tw *tabwriter.Writer
}

func newTable(w io.Writer, headers ...string) *table {
	t := &table{tw: tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)}
	if len(headers) > 0 {
		t.row(headers...)
	}
	return t
}

func (t *table) row(cells ...string) {
	for i, c := range cells {
		if c == "" {
			cells[i] = "<none>"
		}
	}
	fmt.Fprintln(t.tw, strings.Join(cells, "\t"))
}

func (t *table) flush() error { return t.tw.Flush() }

// age is kubectl's AGE column.
func age(now time.Time, t metav1.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}
