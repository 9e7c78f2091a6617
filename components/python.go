package components

import (
	"errors"
	"os"
	"os/exec"
)

// PythonEnv names the Python that has airbyte-cdk 7.x.
const PythonEnv = "AIRBYTE_PYTHON"

// PythonImage is the image that runs custom components.
var PythonImage = "airbyte/source-declarative-go:<version>-python"

// FindPython returns the interpreter to run the host with: flag (--python),
// else AIRBYTE_PYTHON, else python3 on PATH. Whether it imports
// airbyte_cdk 7.x is known when the host says hello.
func FindPython(flag string, getenv func(string) string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	for _, p := range []string{flag, getenv(PythonEnv)} {
		if p != "" {
			return p, nil
		}
	}
	if p, err := exec.LookPath("python3"); err == nil {
		return p, nil
	}
	return "", errors.New(missingPython("no python3 on PATH"))
}

// missingPython says what is missing to run custom components and where it is.
func missingPython(why string) string {
	return "custom Python components need Python 3 with airbyte-cdk 7.x (" + why + "): set " + PythonEnv + " to such a Python, or run the image " + PythonImage + ", which has it"
}
