"""Opening and replacing files without surprises, for every writer in the package.

    exact.py     open exactly the path named: no symlink followed on the way (openat2 / O_NOFOLLOW), no hard
                 link written through
    update.py    change a file other processes read and change too: locked, atomic, comments kept (tomlkit)
    pending.py   temporary files of atomic writes, recorded so a killed agent's leftovers get swept

May import the standard library and errors only.
"""
