package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// command is one subcommand of the command line.
type command struct {
	name, short string
	flags       *flag.FlagSet
	required    []string                        // flags that must be given
	check       func() error                    // the flags' values, once parsed (nil: any)
	run         func(ctx context.Context) error // after the flags are parsed
	signals     bool                            // cancel ctx on SIGINT and SIGTERM
}

// usageError is a mistake on the command line: an unknown command or flag, a
// missing required flag, an argument no command takes.
type usageError struct{ message string }

func (e usageError) Error() string { return e.message }

// commandLine is the commands and the flags every command takes (--manifest,
// --debug), which may also come before the command's name. (The standard
// flag package, not cobra: cobra's init, command tree and completion
// commands cost every run ~1 ms; README, dependency notes.)
type commandLine struct {
	program  string
	short    string
	version  string
	commands []*command
	global   func(fs *flag.FlagSet) // declares the flags every command takes
	stderr   io.Writer
}

// newCommand declares a command whose flags the caller adds to its FlagSet.
func (cl *commandLine) newCommand(name, short string, run func(ctx context.Context) error) *command {
	c := &command{name: name, short: short, run: run, flags: flag.NewFlagSet(cl.program+" "+name, flag.ContinueOnError)}
	c.flags.SetOutput(io.Discard)
	cl.global(c.flags)
	cl.commands = append(cl.commands, c)
	return c
}

// parse finds the command args name and parses its flags. A nil command with
// a nil error means nothing is to run (help or the version was printed).
func (cl *commandLine) parse(args []string) (*command, error) {
	root := flag.NewFlagSet(cl.program, flag.ContinueOnError)
	root.SetOutput(io.Discard)
	cl.global(root)
	version := root.Bool("version", false, "print the version")
	if err := root.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			cl.usage(nil)
			return nil, nil
		}
		return nil, usageError{err.Error()}
	}
	if *version {
		fmt.Fprintf(cl.stderr, "%s version %s\n", cl.program, cl.version)
		return nil, nil
	}
	rest := root.Args()
	if len(rest) == 0 || rest[0] == "help" {
		cl.usage(nil)
		return nil, nil
	}
	var c *command
	for _, candidate := range cl.commands {
		if candidate.name == rest[0] {
			c = candidate
		}
	}
	if c == nil {
		return nil, usageError{fmt.Sprintf("unknown command %q for %q", rest[0], cl.program)}
	}
	if err := c.flags.Parse(rest[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			cl.usage(c)
			return nil, nil
		}
		return nil, usageError{err.Error()}
	}
	if c.flags.NArg() > 0 {
		return nil, usageError{fmt.Sprintf("unknown command %q for %q", c.flags.Arg(0), cl.program+" "+c.name)}
	}
	given := map[string]bool{}
	c.flags.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var missing []string
	for _, name := range c.required {
		if !given[name] {
			missing = append(missing, fmt.Sprintf("%q", name))
		}
	}
	if len(missing) > 0 {
		return nil, usageError{fmt.Sprintf("required flag(s) %s not set", strings.Join(missing, ", "))}
	}
	if c.check != nil {
		if err := c.check(); err != nil {
			return nil, usageError{err.Error()}
		}
	}
	return c, nil
}

// usage prints what the commands (or command c) are and take, on stderr.
func (cl *commandLine) usage(c *command) {
	w := cl.stderr
	if c == nil {
		fmt.Fprintf(w, "%s\n\nUsage:\n  %s [command] [flags]\n\nCommands:\n", cl.short, cl.program)
		for _, one := range cl.commands {
			fmt.Fprintf(w, "  %-10s %s\n", one.name, one.short)
		}
		fmt.Fprintf(w, "\nFlags of every command:\n")
		root := flag.NewFlagSet(cl.program, flag.ContinueOnError)
		cl.global(root)
		printFlags(w, root)
		fmt.Fprintf(w, "\nUse \"%s [command] --help\" for a command's flags.\n", cl.program)
		return
	}
	fmt.Fprintf(w, "%s\n\nUsage:\n  %s %s [flags]\n\nFlags:\n", c.short, cl.program, c.name)
	printFlags(w, c.flags)
}

func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		kind, usage := flag.UnquoteUsage(f)
		if kind != "" {
			kind = " " + kind
		}
		fmt.Fprintf(w, "  --%s%s\n        %s", f.Name, kind, usage)
		if f.DefValue != "" && f.DefValue != "false" {
			fmt.Fprintf(w, " (default %s)", f.DefValue)
		}
		fmt.Fprintln(w)
	})
}
