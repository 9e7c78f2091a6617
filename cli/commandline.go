package cli

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/airbyte-go/source-declarative/runtime"
)

// program is the command's name in help and usage errors.
const program = "source-declarative"

// commands declares the commands and their flags. Errors and usage are
// printed by Main; cobra's completion command is left out (the platform
// runs the connector, not a shell).
func (a *app) commands(version string) *cobra.Command {
	root := &cobra.Command{Use: program, Short: "Run an Airbyte declarative manifest as a source connector", Version: version,
		SilenceErrors: true, SilenceUsage: true, CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true}}
	global := root.PersistentFlags()
	global.StringVar(&a.manifestPath, "manifest", "", "path of the manifest (YAML or JSON)")
	global.StringVar(&a.manifestPath, "manifest-path", "", "the same as --manifest, under the name Airbyte's source-declarative-manifest gives it")
	global.StringVar(&a.python, "python", "", "the Python with airbyte-cdk 7.x that runs the manifest's custom components (default: $AIRBYTE_PYTHON, else python3 on PATH)")
	global.BoolVar(&a.debug, "debug", false, "print DEBUG LOG messages: a summary of every request and response, secrets masked")
	spec := a.command("spec", "Print the connector specification", false, a.spec)
	spec.Flags().StringVar(&a.configPath, "config", "", "path of a config JSON: its __injected_declarative_manifest is the manifest when no other is found (optional)")
	check := a.command("check", "Check the config connects", true, a.check)
	discover := a.command("discover", "Print the catalog of streams", true, a.discover)
	read := a.command("read", "Read the configured streams", true, a.read)
	for _, c := range []*cobra.Command{check, discover, read} {
		c.Flags().StringVar(&a.configPath, "config", "", "path of the config JSON")
		c.Flags().StringVar(&a.componentsPath, "components-path", "", "the components.py of the manifest's custom components (run only with AIRBYTE_ENABLE_UNSAFE_CODE=true, as in Airbyte)")
		c.MarkFlagRequired("config")
	}
	read.Flags().StringVar(&a.catalogPath, "catalog", "", "path of the configured catalog JSON")
	read.Flags().StringVar(&a.statePath, "state", "", "path of the state JSON")
	read.Flags().BoolVar(&a.writeConfig, "write-config", false, "also write a rotated config back to the --config file (for orchestrators that ignore CONTROL messages)")
	read.MarkFlagRequired("catalog")
	testRead := a.command("test-read", "Read the first pages of one stream as the Connector Builder does", true, a.testRead)
	testRead.Flags().StringVar(&a.configPath, "config", "", "path of the config JSON (the testing values)")
	testRead.Flags().StringVar(&a.stream, "stream", "", "the stream to read")
	a.limits = runtime.DefaultTestLimits
	testRead.Flags().Var(limitFlag{&a.limits.MaxPagesPerSlice}, "max-pages", "pages to read at most")
	testRead.Flags().Var(limitFlag{&a.limits.MaxRecords}, "max-records", "records to read at most")
	testRead.Flags().Var(limitFlag{&a.limits.MaxSlices}, "max-slices", "slices to read at most")
	testRead.Flags().StringVar(&a.statePath, "state", "", "path of the state JSON to start the stream from, as read takes it")
	testRead.Flags().BoolVar(&a.pretty, "pretty", false, "print pages, statuses and paginator decisions for a person instead of a RECORD")
	testRead.MarkFlagRequired("config")
	testRead.MarkFlagRequired("stream")
	root.AddCommand(spec, check, discover, read, testRead)
	return root
}

// command declares a subcommand that runs fn once its flags are parsed:
// no arguments, debug logs as --debug or LOG_LEVEL say, and with signals
// the context cancelled on SIGINT and SIGTERM (for the commands that make
// requests).
func (a *app) command(use, short string, signals bool, fn func(ctx context.Context) error) *cobra.Command {
	return &cobra.Command{Use: use, Short: short, Args: cobra.NoArgs, RunE: func(cmd *cobra.Command, _ []string) error {
		a.ran = true
		// The platform asks for debug logs with LOG_LEVEL=debug, as Airbyte's
		// entrypoint reads it, rather than with --debug.
		a.out.SetDebug(a.debug || strings.EqualFold(os.Getenv("LOG_LEVEL"), "debug"))
		ctx := cmd.Context()
		if signals {
			var stop context.CancelFunc
			ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
			defer stop()
		}
		return fn(ctx)
	}}
}

// goStyleFlags lets a long flag be written with one dash (-manifest), as
// the standard flag package took it: pflag would read it as shorthands.
func goStyleFlags(root *cobra.Command, args []string) []string {
	long := map[string]bool{}
	for _, c := range append(root.Commands(), root) {
		c.Flags().VisitAll(func(f *pflag.Flag) { long[f.Name] = true })
		c.PersistentFlags().VisitAll(func(f *pflag.Flag) { long[f.Name] = true })
	}
	out := make([]string, 0, len(args))
	for i, arg := range args {
		if arg == "--" {
			return append(out, args[i:]...)
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(arg, "-"), "=")
		if !strings.HasPrefix(arg, "--") && len(name) > 1 && long[name] {
			arg = "-" + arg
		}
		out = append(out, arg)
	}
	return out
}

// limitFlag is a test-read limit: a whole number of at least 1.
type limitFlag struct{ n *int }

func (f limitFlag) String() string { return strconv.Itoa(*f.n) }

func (f limitFlag) Type() string { return "int" }

func (f limitFlag) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return errLimit
	}
	*f.n = n
	return nil
}

var errLimit = errors.New("must be a whole number of at least 1")
