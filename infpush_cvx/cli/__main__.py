"""``python -m infpush_cvx.cli``: the ``infpush-cvx`` command."""

import sys

from . import main

sys.exit(main())
