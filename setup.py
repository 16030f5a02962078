"""The compiled counting loops of the streaming engine (audit/scores/_kernel.c), built
where a C compiler is found.  Optional: where the build fails, the install goes on
without them and NumPy counts (audit.scores.counting).  Everything else about the
package is in pyproject.toml."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("audit.scores._kernel", ["audit/scores/_kernel.c"], optional=True),
    ]
)
