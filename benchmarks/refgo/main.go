// Command wlmap-refgo runs workloads through the reference Karta library so that
// workload-map's Python engine can be compared with it (differential tests) and timed
// against it (benchmarks). It is a test harness only: it depends on the reference module
// and prints what the reference computes; it implements no behaviour of its own beyond
// the KAI Scheduler grouping steps that REFERENCE.md describes for consumers.
//
// Usage:
//
//	wlmap-refgo [describe] < request.json   one report per request (see report.go)
//	wlmap-refgo describe-many < batch.json  {"requests": [...]} -> {"reports": [...]}
//	wlmap-refgo bench      < bench.json     timings as JSON (see bench.go)
//	wlmap-refgo version                     the reference module and version
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/debug"
)

const referenceModule = "github.com/run-ai/karta"

func main() {
	mode := "describe"
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	if len(os.Args) > 2 {
		fail(2, "usage: wlmap-refgo [describe|describe-many|bench|version] < input.json")
	}

	var (
		out any
		err error
	)
	switch mode {
	case "describe":
		out, err = runDescribe(os.Stdin)
	case "describe-many":
		out, err = runDescribeMany(os.Stdin)
	case "bench":
		out, err = runBench(os.Stdin)
	case "version":
		out = map[string]string{"module": referenceModule, "version": referenceVersion()}
	case "-h", "--help", "help":
		fmt.Println("usage: wlmap-refgo [describe|describe-many|bench|version] < input.json")
		return
	default:
		fail(2, fmt.Sprintf("unknown mode %q (want describe, describe-many, bench or version)", mode))
	}
	if err != nil {
		fail(1, err.Error())
	}

	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		fail(1, fmt.Sprintf("writing output: %v", err))
	}
}

func fail(code int, message string) {
	fmt.Fprintf(os.Stderr, "error: %s\n", message)
	os.Exit(code)
}

// referenceVersion reports the version of the reference module linked into this binary.
func referenceVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	for _, dep := range info.Deps {
		if dep.Path == referenceModule {
			return dep.Version
		}
	}
	return "unknown"
}

// readAll reads the whole input, naming stdin in the error.
func readAll(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("reading stdin: %w", err)
	}
	return data, nil
}
