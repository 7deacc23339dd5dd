# The shell of JupyterLab's Terminal (make course): the user's own bash set-up first, then the course's venv
# activated, so `python lab.py` and `grader grade` run the course's programs whatever ~/.bashrc put on PATH.
if [ -f ~/.bashrc ]; then . ~/.bashrc; fi
if [ -n "$COURSE_VENV" ] && [ -f "$COURSE_VENV/bin/activate" ]; then . "$COURSE_VENV/bin/activate"; fi
