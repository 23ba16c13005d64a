"""The course's own interface strings: badges, verified output, quick checks, the 404 page,
the footer and the colour scheme toggle, translated through each language's ``i18n/<lang>/_course.po``.

A catalog domain of its own, beside the engine's ``_site.po`` (site name, notices, status
page): mkdocs.yml lists this tuple under the po-i18n plugin's ``interface_strings``, so
``po-i18n update`` extracts it, ``po-i18n check`` and every build judge its translations
like any other catalog, and the course's hooks read it with
:func:`po_i18n.build_context.interface_of` (``domain="course"``).
"""
from __future__ import annotations

from po_i18n.interface import UIString

VERIFIED = UIString("Verified", "badge under a code block: the program shown passed its test as it is now")
VERIFIED_FAILS = UIString("Verified: fails as described",
                          "badge under the code of a 'break it' exercise: the program was run and failed exactly as the page says it does")
VERIFIED_HANGS = UIString("Verified: hangs as described",
                          "badge under the code of a 'break it' exercise: the program was run and blocked, as the page says, until it was stopped")
PROCESSES = UIString("%(count)d process", "badge: how many processes the torchrun job had", "%(count)d processes")
BACKEND_ON = UIString("%(backend)s on %(device)s", "badge: communication backend and device, e.g. 'gloo on CPU'")
BACKEND_ON_GPUS = UIString("%(backend)s on %(count)d CUDA GPU",
                           "badge: communication backend and how many CUDA GPUs the job used in all, e.g. 'NCCL on 2 CUDA GPUs'; "
                           "fewer GPUs than processes means processes shared a GPU",
                           "%(backend)s on %(count)d CUDA GPUs")
ON_SLURM = UIString("Slurm, %(count)d node", "badge: the program ran as a job of the Slurm cluster scheduler, on this many nodes",
                    "Slurm, %(count)d nodes")
ALSO_VERIFIED = UIString("also verified with %(run)s",
                         "badge: every test of the program also passed in a second setting; %(run)s is e.g. "
                         "'torchrun 1 process, NCCL on 1 CUDA GPU'")
ALSO_BARE = UIString("its bare runs also passed with %(run)s",
                     "badge: the program, launched exactly as shown but with fewer processes, also ran cleanly in a second "
                     "setting, without the tests of the lesson's claims; %(run)s is e.g. 'torchrun 1 process, NCCL on 1 CUDA GPU'")
NCCL_AWAITING = UIString("NCCL awaiting %(count)d CUDA GPU",
                         "badge: the program ran on CUDA over gloo with processes sharing GPUs; its NCCL path, which needs one "
                         "GPU per process, has not run yet",
                         "NCCL awaiting %(count)d CUDA GPUs")
NOT_VERIFIED = UIString("Not verified: this code has no passing run as it is now",
                        "badge under a code block whose program has no passing test run for its current content")
AWAITING_GPU = UIString("Awaiting GPU verification: needs %(count)d CUDA GPU",
                        "badge: the program needs CUDA GPUs and has not been run on them yet",
                        "Awaiting GPU verification: needs %(count)d CUDA GPUs")
OUTPUT_TITLE = UIString("Output of the verified run",
                        "title of the collapsed block under a launch command: what the program printed in the run that verified it")
OUTPUT_RANK = UIString("rank %(rank)d", "label above one part of the verified output: what one process (rank) printed")
OUTPUT_ATTEMPT = UIString("rank %(rank)d, attempt %(attempt)d",
                          "label above one part of the verified output when torchrun restarted the workers: one rank in one attempt (0 is the first)")
OUTPUT_NOTHING = UIString("This rank printed nothing.", "verified output: under the label of a rank that printed nothing")
OUTPUT_ORDER = UIString("The ranks print at the same time: in your terminal their lines can come in any order.",
                        "verified output: note above the per-rank parts")
OUTPUT_PLACEHOLDERS = UIString("Values that change from run to run are shown as:",
                               "verified output: followed by the placeholders used, e.g. `<port>`, `<pid>`")
HOW_VERIFIED = UIString("How the code on this site is verified", "tooltip of every verification badge")
QUIZ_CHECK = UIString("Check", "quick-check question: button that checks the chosen answer")
QUIZ_RIGHT = UIString("Right.", "quick-check question: feedback when the chosen answer is right")
QUIZ_WRONG = UIString("Not quite: the right answer is now marked.", "quick-check question: feedback when the chosen answer is wrong")
QUIZ_CHOOSE = UIString("Choose an answer first.", "quick-check question: feedback when Check is pressed with nothing chosen")
NOT_FOUND_TITLE = UIString("Page not found", "title of the 404 page", kind="plain text")
NOT_FOUND_TEXT = UIString("There is no page at this address. It may have moved, or the link may be mistyped.",
                          "text of the 404 page", kind="plain text")
NOT_FOUND_HOME = UIString("Go to the course home page", "link on the 404 page", kind="plain text")
MADE_WITH = UIString("Made with %(generator)s", "footer of every page; %(generator)s is the link 'Material for MkDocs' (a name, kept in English)",
                     kind="plain text")
PROGRAM_LINK = UIString("The whole program: its source, its command and a download",
                        "tooltip of a code block's file name, which leads to the page of the whole program", kind="plain text")
PROGRAM_INTRO = UIString("The whole program that %(lessons)s shows section by section. The badges under its command and its source "
                         "say whether and how it was verified.",
                         "page of a whole program: first paragraph; %(lessons)s is a link to the lesson whose title is its "
                         "text, or a list of such links (the number of lessons chooses the form)",
                         "The whole program that %(lessons)s show section by section. The badges under its command and its source "
                         "say whether and how it was verified.")
PROGRAM_RUN = UIString("Run it", "page of a whole program: heading above the command", kind="heading")
PROGRAM_RUN_TEXT = UIString("Put the downloaded files in an empty folder and run this command there:",
                            "page of a whole program: before the launch command")
PROGRAM_DOWNLOAD = UIString("Download %(name)s", "page of a whole program: link that downloads one file; %(name)s is its file name")
PROGRAM_DOWNLOAD_ALL = UIString("Download the %(count)d files in one zip archive",
                                "page of a whole program made of several files: link that downloads all of them",
                                "Download the %(count)d files in one zip archive")
PROGRAM_DIGEST = UIString("SHA-256 of the file:",
                          "page of a whole program: followed by the file's checksum, which readers compare with what they downloaded")
PROGRAM_SOURCE = UIString("Source", "page of a whole program: heading above the full listing", kind="heading")
PROGRAM_MARKERS = UIString("The listing leaves out the %(marker)s lines that mark the sections the lessons show; "
                           "the download keeps them: it is the file byte for byte.",
                           "page of a whole program: under the heading Source; %(marker)s is the code `--8<--`")
LICENCE = UIString("Code: %(code)s licence. Text: %(text)s.",
                   "footer of every page: the licences of the course's programs and of its text; %(code)s is the link "
                   "'MIT' and %(text)s the link 'CC BY 4.0' (names of licences, kept in English)", kind="plain text")
TO_DARK = UIString("Switch to dark mode", "tooltip and accessible name of the header button that switches the site to its "
                   "dark colours", kind="plain text")
TO_LIGHT = UIString("Switch to light mode", "tooltip and accessible name of the header button that switches the site back "
                    "to its light colours", kind="plain text")

STRINGS = (VERIFIED, VERIFIED_FAILS, VERIFIED_HANGS, PROCESSES, BACKEND_ON, BACKEND_ON_GPUS, ON_SLURM,
           ALSO_VERIFIED, ALSO_BARE, NCCL_AWAITING, NOT_VERIFIED, AWAITING_GPU, HOW_VERIFIED,
           OUTPUT_TITLE, OUTPUT_RANK, OUTPUT_ATTEMPT, OUTPUT_NOTHING, OUTPUT_ORDER, OUTPUT_PLACEHOLDERS,
           QUIZ_CHECK, QUIZ_RIGHT, QUIZ_WRONG, QUIZ_CHOOSE, NOT_FOUND_TITLE, NOT_FOUND_TEXT, NOT_FOUND_HOME, MADE_WITH,
           PROGRAM_LINK, PROGRAM_INTRO, PROGRAM_RUN, PROGRAM_RUN_TEXT, PROGRAM_DOWNLOAD, PROGRAM_DOWNLOAD_ALL,
           PROGRAM_DIGEST, PROGRAM_SOURCE, PROGRAM_MARKERS, LICENCE, TO_DARK, TO_LIGHT)
