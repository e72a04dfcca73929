# SPDX-License-Identifier: Apache-2.0
"""`python -m porep_prover.cli` runs the porep-prover command."""
import sys

from . import main

sys.exit(main())
