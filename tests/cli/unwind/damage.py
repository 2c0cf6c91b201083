import random, struct, sys
# damage.py IN OUT SEED SECTION[:SKIP]... - a copy of ELF64 file IN with
# each named section's bytes (after its first SKIP) replaced by random
# ones from SEED
src, dst, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
b = bytearray(open(src, 'rb').read())
shoff, = struct.unpack_from('<Q', b, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from('<HHH', b, 0x3a)
def sh(i):
    return struct.unpack_from('<IIQQQQIIQQ', b, shoff + i * shentsize)
stroff = sh(shstrndx)[4]
def name(i):
    o = stroff + sh(i)[0]
    return b[o:b.index(0, o)].decode()
rnd = random.Random(seed)
want = dict((a.split(':') + ['0'])[:2] for a in sys.argv[4:])
done = set()
for i in range(shnum):
    n = name(i)
    if n in want:
        off, size = sh(i)[4], sh(i)[5]
        for k in range(off + int(want[n]), off + size):
            b[k] = rnd.randrange(256)
        done.add(n)
if done != set(want):
    sys.exit('no section ' + ' '.join(set(want) - done))
open(dst, 'wb').write(b)
