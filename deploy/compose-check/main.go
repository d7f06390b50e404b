// compose-check loads a Compose file with the Compose specification's own loader (compose-go),
// the library `docker compose` uses: an unknown key, a wrong type, a dependency on a missing
// service or a required variable left unset is an error (exit 1). With -json it prints the loaded
// project (variables interpolated) for tests that run the same services as processes.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/compose-spec/compose-go/v2/cli"
)

func main() {
	file := flag.String("f", "docker-compose.yml", "the Compose file")
	asJSON := flag.Bool("json", false, "print the loaded project as JSON")
	flag.Parse()
	opts, err := cli.NewProjectOptions([]string{*file}, cli.WithOsEnv, cli.WithName("intake"), cli.WithResolvedPaths(true))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	project, err := opts.LoadProject(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if *asJSON {
		out, err := project.MarshalJSON()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Stdout.Write(out)
		return
	}
	fmt.Printf("OK: %d services %v\n", len(project.Services), project.ServiceNames())
}
