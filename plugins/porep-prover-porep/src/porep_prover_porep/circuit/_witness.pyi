# SPDX-License-Identifier: Apache-2.0
from typing import Any

def run(num_inputs: int, coefficients: Any, ops: Any, ops_off: Any, sums: Any, sums_off: Any, *arrays: Any) -> None: ...
