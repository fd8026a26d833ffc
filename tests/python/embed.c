// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A program that embeds CPython through libpython3.X.so, as servers and
 * plugins do, and runs a script with it: tests/python.bats profiles its
 * Python functions, which live in the library, not in the executable.
 *
 * usage: embed SCRIPT ARG
 */
#include <Python.h>

int main(int argc, char **argv)
{
	PyObject *args;
	FILE *f;
	int rc;

	if (argc != 3)
		return 2;
	Py_InitializeEx(0);
	args = Py_BuildValue("[ss]", argv[1], argv[2]);
	if (!args || PySys_SetObject("argv", args))
		return 1;
	f = fopen(argv[1], "r");
	if (!f)
		return 1;
	rc = PyRun_SimpleFileExFlags(f, argv[1], 1, NULL);
	return Py_FinalizeEx() || rc;
}
