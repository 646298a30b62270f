"""``python -m xmlevents``, and the file ``spark-submit`` runs (issue 29, item 3): spark-submit
takes a ``.py`` file, not a console script, so this module also runs as a file::

    spark-submit --master URL "$(python3 -c 'import xmlevents.__main__ as m; print(m.__file__)')" \\
        replay HISTORY --out hdfs://.../out ...

Importing it runs nothing (the one-liner above imports it to find it).
"""

import os
import sys

if __name__ == "__main__":
    if not __package__:
        # Run as a file: Python put this folder first on sys.path, where its subfolders
        # (_cli, and in an installed layout algebra, replay, ...) would shadow top-level
        # modules of those names. The package itself is imported as installed.
        here = os.path.dirname(os.path.abspath(__file__))
        if sys.path and os.path.abspath(sys.path[0] or os.curdir) == here:
            del sys.path[0]
    from xmlevents._cli import entry

    entry()
