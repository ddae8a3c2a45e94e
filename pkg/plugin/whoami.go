package plugin

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

func newWhoamiCommand(o *Options) *cobra.Command {
	return &cobra.Command{
		Use:   "whoami",
		Short: "Who you are to the cluster: user, tenant, and through what",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := o.getSession(cmd.Context())
			if err != nil {
				return err
			}
			id := s.identity
			switch o.Output {
			case "json", "yaml":
				return printStructured(o.Out, o.Output, id)
			case "", "wide":
			default:
				return fmt.Errorf("whoami has no %q output: use json or yaml", o.Output)
			}
			fmt.Fprintf(o.Out, "User:     %s\n", id.User)
			if o.Output == "wide" {
				fmt.Fprintf(o.Out, "Groups:   %s\n", strings.Join(id.Groups, ", "))
			}
			if id.Provider {
				fmt.Fprintf(o.Out, "Provider: yes (may onboard and offboard tenants: kubectl tenant admin)\n")
			}
			switch len(id.Tenants) {
			case 0:
				fmt.Fprintf(o.Out, "Tenant:   <none>\n")
			case 1:
				fmt.Fprintf(o.Out, "Tenant:   %s (%s)\n", id.Tenants[0].Tenant, strings.Join(id.Tenants[0].Via, ", "))
			default:
				fmt.Fprintf(o.Out, "Tenants:  several, so you may act in none of them:\n")
				for _, m := range id.Tenants {
					fmt.Fprintf(o.Out, "  %s (%s)\n", m.Tenant, strings.Join(m.Via, ", "))
				}
			}
			return nil
		},
	}
}
