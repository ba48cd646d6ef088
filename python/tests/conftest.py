"""The tests import the package from python/ and find the tools through
$MEGAGRAPH_BUILD (set by the ctest entry), else the repository's build/."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
