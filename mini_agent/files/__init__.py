"""Opening and replacing files without surprises, for every writer in the package.

    exact.py     open exactly the path named: no symlink followed on the way (openat2 / O_NOFOLLOW), no hard
                 link written through
    update.py    change a file other processes read and change too: locked, atomic, comments kept (tomlkit)

May import the standard library and errors only.
"""
