/* Model of heist's Chase-Lev deque (include/heist/detail/core/chase_lev_deque.hpp), checked
 * exhaustively with spin. The owner runs on x86-TSO: its stores go to a FIFO store buffer
 * that a flusher process drains in any interleaving; a fence waits for the buffer to drain;
 * a CAS (a locked instruction) drains it first; the owner's loads see its own buffered
 * stores. Thieves store only through CAS. Under TSO, removing the pop's seq_cst fence (T4)
 * lets the owner and a thief both take the last element: build with -DNO_T4_FENCE and spin
 * must find that (see run.sh).
 *
 * Scenario (after CDSChecker's chase-lev-deque driver): the owner pushes 1, 2, 3 into a ring
 * of capacity 2 (the third push grows it to 4), then pops twice; two thieves steal once
 * each, concurrently. At the end the owner drains what is left. Checked: no value is taken
 * twice, every value is taken, nothing else is taken.
 *
 * With -DFENCE_FREE: the deque's fence-free pop mode (chase_lev_deque.hpp's file comment).
 * The mode starts fence_free; before any pop the owner may try to go back to it (a seq_cst
 * store, a locked instruction here, then the load of the thieves' count); a thief counts
 * itself, reads the mode, and unless it is fenced looks at the deque, moves fence_free to
 * switching, then either sees the owner acknowledge (a pop that read switching fences and
 * stores fenced) or runs the process-wide barrier (an atomic drain of the owner's store
 * buffer: the owner's CPU executes a full fence wherever it is) and stores fenced; then it
 * steals with the fenced protocol. Variants that must fail (run.sh): NO_BARRIER (the thief skips the
 * barrier), NO_COUNT (the owner ignores the count), MODE_BEFORE_T3 (the owner reads the mode
 * before its store of bottom), ACK_ON_SWITCHING (the thief steals once the mode is switching,
 * without waiting for the acknowledgement or running the barrier).
 */
#define NVALS 3
#define SB 4          /* store-buffer entries */
#define K_BOTTOM 0    /* store-buffer entry kinds */
#define K_A 1         /* slot of ring A (capacity 2) */
#define K_B 2         /* slot of ring B (capacity 4) */
#define K_RING 3      /* the ring pointer: 0 = A, 1 = B */

short top = 0;
short bottom = 0;
byte ringA[2];
byte ringB[4];
#ifdef FENCE_FREE
byte ring = 1;        /* the grow is checked without the mode: start in ring B, no grow */
#else
byte ring = 0;
#endif
byte taken[NVALS + 1];
byte thieves_done = 0;
#define FENCED 0
#define FF 1          /* fence_free */
#define SWITCHING 2
byte mode = FF;
byte thieves = 0;     /* m_thieves */

/* the owner's store buffer */
byte sb_kind[SB]; short sb_idx[SB]; short sb_val[SB]; byte sb_n = 0;

inline owner_store(kind, idx, val) {
  (sb_n < SB);  /* a full buffer stalls the owner until the flusher drains an entry */
  atomic { sb_kind[sb_n] = kind; sb_idx[sb_n] = idx; sb_val[sb_n] = val; sb_n++ }
}

/* The owner's load: its newest buffered store to that location, else memory. */
inline owner_load(kind, idx, out) {
  atomic {
    found = 0; k = sb_n;
    do
    :: k > 0 ->
       k--;
       if
       :: sb_kind[k] == kind && (kind == K_BOTTOM || kind == K_RING || sb_idx[k] == idx) ->
          out = sb_val[k]; found = 1; break
       :: else -> skip
       fi
    :: else -> break
    od;
    if
    :: found == 0 ->
       if
       :: kind == K_BOTTOM -> out = bottom
       :: kind == K_RING -> out = ring
       :: kind == K_A -> out = ringA[idx]
       :: kind == K_B -> out = ringB[idx]
       fi
    :: else -> skip
    fi
  }
}

inline fence() { (sb_n == 0) }

/* Applies the oldest buffered store to memory. */
inline flush_one() {
  if
  :: sb_kind[0] == K_BOTTOM -> bottom = sb_val[0]
  :: sb_kind[0] == K_RING -> ring = sb_val[0]
  :: sb_kind[0] == K_A -> ringA[sb_idx[0]] = sb_val[0]
  :: sb_kind[0] == K_B -> ringB[sb_idx[0]] = sb_val[0]
  fi;
  fi_ = 0;
  do
  :: fi_ + 1 < sb_n -> sb_kind[fi_] = sb_kind[fi_ + 1]; sb_idx[fi_] = sb_idx[fi_ + 1];
                       sb_val[fi_] = sb_val[fi_ + 1]; fi_++
  :: else -> break
  od;
  sb_n--
}

proctype flusher() {
  byte fi_;
  do
  :: atomic { sb_n > 0 -> flush_one() }
  :: timeout -> break
  od
}

inline take(v) {
  atomic { assert(v >= 1 && v <= NVALS); taken[v]++; assert(taken[v] == 1) }
}

proctype owner() {
  short b, t, r, x, i, cap;
  byte found, k, m;
  byte next = 1;
  /* push 1, 2, 3 */
  do
  :: next <= NVALS ->
     owner_load(K_BOTTOM, 0, b);   /* P1 */
     t = top;                      /* P2 acquire */
     owner_load(K_RING, 0, r);     /* P3 */
     if :: r == 0 -> cap = 2 :: else -> cap = 4 fi;
     if
     :: b - t > cap - 1 ->         /* P4: grow A -> B, copying [t, b) */
        i = t;
        do
        :: i < b -> owner_load(K_A, i % 2, x); owner_store(K_B, i % 4, x); i++
        :: else -> break
        od;
        owner_store(K_RING, 0, 1);  /* R3 release: TSO keeps store order */
        r = 1
     :: else -> skip
     fi;
     if                            /* P5 */
     :: r == 0 -> owner_store(K_A, b % 2, next)
     :: else -> owner_store(K_B, b % 4, next)
     fi;
     owner_store(K_BOTTOM, 0, b + 1);  /* P7 */
     if :: b == t -> fence() :: else -> skip fi;  /* seq_cst store into an empty deque */
     next++
  :: else -> break
  od;
  /* pop twice, then drain after the thieves are done */
  byte pops = 0;
  do
  :: pops < 2 || thieves_done == 2 ->
#ifdef FENCE_FREE
     if                            /* try_fence_free, when the countdown says so */
     :: mode == FENCED ->
        fence(); mode = FF;        /* TW: seq_cst store (xchg: a locked instruction) */
#ifndef NO_COUNT
        atomic { if :: thieves > 0 && mode == FF -> mode = FENCED :: else -> skip fi }  /* TC */
#endif
     :: true -> skip
     fi;
#endif
     owner_load(K_BOTTOM, 0, b);
     b = b - 1;                    /* T1 */
     owner_load(K_RING, 0, r);     /* T2 */
#if defined(FENCE_FREE) && defined(MODE_BEFORE_T3)
     m = mode;
#endif
     owner_store(K_BOTTOM, 0, b);  /* T3 */
#ifdef FENCE_FREE
#ifndef MODE_BEFORE_T3
     m = mode;                     /* TM */
#endif
     if
     :: m != FF -> fence();        /* T4 unless fence_free */
        /* the acknowledgement: a seq_cst store (xchg, a locked instruction; the buffer is
           already drained by T4) */
        if :: m == SWITCHING -> mode = FENCED :: else -> skip fi
     :: else -> skip
     fi;
#else
#ifndef NO_T4_FENCE
     fence();                      /* T4 */
#endif
#endif
     t = top;                      /* T5 */
     if
     :: t > b -> owner_store(K_BOTTOM, 0, b + 1);  /* T8: empty */
        if :: pops >= 2 -> break :: else -> pops++ fi
     :: else ->
        if
        :: r == 0 -> owner_load(K_A, b % 2, x)
        :: else -> owner_load(K_B, b % 4, x)
        fi;
        if
        :: t == b ->               /* T7: the last element, CAS on top */
           fence();                /* a locked instruction drains the buffer */
           atomic { if :: top == t -> top = t + 1 :: else -> x = 0 fi }
           owner_store(K_BOTTOM, 0, b + 1)
        :: else -> skip
        fi;
        if :: x != 0 -> take(x) :: else -> skip fi;
        if :: pops < 2 -> pops++ :: else -> skip fi
     fi
  :: else -> (thieves_done == 2)
  od;
  fence();
  /* every value taken exactly once */
  assert(taken[1] == 1 && taken[2] == 1 && taken[3] == 1)
}

/* The fenced steal, S1..S6. */
inline steal_fenced() {
  t = top;                         /* S1 acquire; S2 is a no-op for a thread without stores */
  b = bottom;                      /* S3 acquire */
  if
  :: t < b ->
     r = ring;                     /* S4 acquire */
     if :: r == 0 -> x = ringA[t % 2] :: else -> x = ringB[t % 4] fi;  /* S5 */
     atomic {                      /* S6 CAS */
       if
       :: top == t -> top = t + 1; take(x)
       :: else -> skip
       fi
     }
  :: else -> skip
  fi
}

proctype thief() {
  short t, b, r, x;
#ifdef FENCE_FREE
  byte m, switcher, fi_;
  atomic { thieves++ }             /* C+ */
  m = mode;                        /* SM */
  if
  :: m == FENCED -> steal_fenced()
  :: else ->
     t = top; b = bottom;          /* the look */
     if
     :: t < b ->
        switcher = 0;
        atomic { if :: m == FF && mode == FF -> mode = SWITCHING; switcher = 1 :: else -> skip fi }
        if
#ifdef ACK_ON_SWITCHING
        :: (mode != FF) -> skip      /* mutant: takes switching for the go-ahead */
#else
        :: (mode == FENCED) -> skip  /* KA: the owner acknowledged (or a switcher is done) */
#endif
        :: true ->                 /* KA timed out: the barrier */
#ifndef NO_BARRIER
           atomic { do :: sb_n > 0 -> flush_one() :: else -> break od }
#endif
           if
           :: switcher == 1 -> atomic { if :: mode == SWITCHING -> mode = FENCED :: else -> skip fi }
           :: else -> skip
           fi
        fi;
        steal_fenced()
     :: else -> skip
     fi
  fi;
  atomic { thieves-- }             /* C- */
#else
  steal_fenced();
#endif
  atomic { thieves_done++ }
}

init {
  atomic { run flusher(); run owner(); run thief(); run thief() }
}
