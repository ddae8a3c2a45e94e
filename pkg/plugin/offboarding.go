package plugin

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
)

// ExitBlocked is the exit status of offboarding when something blocks the
// tenant's delete.
const ExitBlocked = 2

func newOffboardingCommand(o *Options) *cobra.Command {
	return &cobra.Command{
		Use:   "offboarding",
		Short: "What blocks deleting your tenancy (exit status 0: nothing, 2: something)",
		Long: `Shows the server's offboarding report: every namespace object, workload
and disk that blocks deleting the tenant, and whether each workload runs,
is stopped or only holds a disk. Exit status 0 when nothing blocks, 2
when something does, 1 on errors.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sc, err := o.scope(cmd.Context())
			if err != nil {
				return err
			}
			report, err := sc.api.Tenants().GetOffboarding(cmd.Context(), sc.tnt.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			return o.printOffboarding(report)
		},
	}
}

// printOffboarding writes report and fails with ExitBlocked when it is not
// ready.
func (o *Options) printOffboarding(report *tenantv1alpha1.OffboardingReport) error {
	switch o.Output {
	case "json", "yaml":
		r := report.DeepCopy()
		r.SetGroupVersionKind(tenantv1alpha1.SchemeGroupVersion.WithKind("OffboardingReport"))
		if err := printStructured(o.Out, o.Output, r); err != nil {
			return err
		}
	case "", "wide":
		writeOffboarding(o.Out, report, o.Output == "wide")
	default:
		return fmt.Errorf("offboarding has no %q output: use json or yaml", o.Output)
	}
	if !report.Ready {
		return &ExitError{Code: ExitBlocked}
	}
	return nil
}

func writeOffboarding(w io.Writer, r *tenantv1alpha1.OffboardingReport, wide bool) {
	if r.Ready {
		fmt.Fprintf(w, "Tenant %s can be deleted: nothing blocks it.\n", r.Tenant)
		return
	}
	fmt.Fprintf(w, "Tenant %s cannot be deleted yet: %d object(s) block it.\n", r.Tenant, len(r.Blockers)+len(r.ProviderBlockers))
	if len(r.Blockers) > 0 {
		fmt.Fprintf(w, "\nDelete these first:\n")
		writeBlockers(w, r.Blockers, wide)
	}
	if len(r.ProviderBlockers) > 0 {
		fmt.Fprintf(w, "\nThe provider's, for the provider to remove:\n")
		writeBlockers(w, r.ProviderBlockers, wide)
	}
}

// writeBlockers writes one blocker a line; wide adds why each blocks.
func writeBlockers(w io.Writer, bs []tenantv1alpha1.OffboardingBlocker, wide bool) {
	headers := []string{"  RESOURCE", "NAMESPACE", "NAME", "STATE"}
	if wide {
		headers = append(headers, "MESSAGE")
	}
	t := newTable(w, headers...)
	for _, b := range bs {
		state := string(b.State)
		if state == "" {
			state = "-"
		}
		ns := b.Namespace
		if ns == "" {
			ns = "-"
		}
		cells := []string{"  " + b.Resource, ns, b.Name, state}
		if wide {
			cells = append(cells, b.Message)
		}
		t.row(cells...)
	}
	_ = t.flush()
}
