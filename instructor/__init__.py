"""The instructor's package: the course registry and notebook anatomy, releasing, grading
(a scratch nbgrader course, the class grader), the course's JupyterHub (``hub``, with its
owner-checked ``exchange``) and the benchmarks.

Students never import it: the notebooks import only ``helpers``. Its dependencies are the
``instructor`` extra (``pip install -e ".[instructor]"``).
"""
