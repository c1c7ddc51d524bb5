;; CRC64/NVME, slicing-by-8 over 64-bit words: the WebAssembly that crc64-nvme.ts runs.
;;
;; This text is the source. `npm run assemble:wasm` (scripts/assemble-wasm.ts, with the wabt package)
;; assembles it into crc64-nvme.wasm.ts, which crc64-nvme.ts imports; test/objstore/crc64-nvme.test.ts fails
;; when the two differ, so regenerate after every edit here.
;;
;; The CRC is the reflected one (polynomial 0x9a6c9329ac4bc9b5 bit-reversed, bits taken from the
;; lowest): one byte b advances it as  crc = T0[(crc ^ b) & 0xff] ^ (crc >> 8).
;; Eight bytes at once: XOR the little-endian word into the CRC, then
;;   crc = T7[byte 0] ^ T6[byte 1] ^ T5[byte 2] ^ T4[byte 3] ^ T3[byte 4] ^ T2[byte 5] ^ T1[byte 6] ^ T0[byte 7]
;; where byte j is (crc >> 8j) & 0xff and Tk[x] is what x followed by k zero bytes adds to the CRC.
;;
;; The memory, 3 pages of 64 KiB; crc64-nvme.ts fills the tables once and moves the CRC and the
;; bytes in and out around each call:
;;        0 ..      8  the running CRC, an i64 (update reads it first and writes it back last)
;;     1024 ..  17408  the tables T0..T7, 256 i64 each (2048 bytes): Tk[x] at 1024 + 2048k + 8x
;;    65536 .. 196608  the bytes to add (up to 128 KiB a call)
(module
  (memory (export "memory") 3)

  ;; update(ptr, len): the CRC at address 0, advanced over the len bytes at ptr.
  (func (export "update") (param $ptr i32) (param $len i32)
    (local $crc i64)
    (local.set $crc (i64.load (i32.const 0)))

    ;; Eight bytes at a time while eight remain.
    (block $words_done
      (loop $words
        (br_if $words_done (i32.lt_u (local.get $len) (i32.const 8)))
        ;; The next word (any alignment), XORed into the CRC.
        (local.set $crc (i64.xor (local.get $crc) (i64.load align=1 (local.get $ptr))))
        ;; Each byte j of the result looked up in T(7 - j) and the eight XORed together. An entry's
        ;; address is the byte times 8 (i32.shl 3), and the load's offset is its table's start
        ;; (byte 0 is shifted by 0, so that the eight lookups read alike).
        (i64.load offset=15360 ;; T7[byte 0]
          (i32.shl (i32.and (i32.wrap_i64 (i64.shr_u (local.get $crc) (i64.const 0))) (i32.const 255)) (i32.const 3)))
        (i64.load offset=13312 ;; T6[byte 1]
          (i32.shl (i32.and (i32.wrap_i64 (i64.shr_u (local.get $crc) (i64.const 8))) (i32.const 255)) (i32.const 3)))
        i64.xor
        (i64.load offset=11264 ;; T5[byte 2]
          (i32.shl (i32.and (i32.wrap_i64 (i64.shr_u (local.get $crc) (i64.const 16))) (i32.const 255)) (i32.const 3)))
        i64.xor
        (i64.load offset=9216 ;; T4[byte 3]
          (i32.shl (i32.and (i32.wrap_i64 (i64.shr_u (local.get $crc) (i64.const 24))) (i32.const 255)) (i32.const 3)))
        i64.xor
        (i64.load offset=7168 ;; T3[byte 4]
          (i32.shl (i32.and (i32.wrap_i64 (i64.shr_u (local.get $crc) (i64.const 32))) (i32.const 255)) (i32.const 3)))
        i64.xor
        (i64.load offset=5120 ;; T2[byte 5]
          (i32.shl (i32.and (i32.wrap_i64 (i64.shr_u (local.get $crc) (i64.const 40))) (i32.const 255)) (i32.const 3)))
        i64.xor
        (i64.load offset=3072 ;; T1[byte 6]
          (i32.shl (i32.and (i32.wrap_i64 (i64.shr_u (local.get $crc) (i64.const 48))) (i32.const 255)) (i32.const 3)))
        i64.xor
        (i64.load offset=1024 ;; T0[byte 7]
          (i32.shl (i32.and (i32.wrap_i64 (i64.shr_u (local.get $crc) (i64.const 56))) (i32.const 255)) (i32.const 3)))
        i64.xor
        local.set $crc
        (local.set $ptr (i32.add (local.get $ptr) (i32.const 8)))
        (local.set $len (i32.sub (local.get $len) (i32.const 8)))
        (br $words)))

    ;; The last bytes (fewer than eight) one at a time: crc = T0[(crc ^ byte) & 0xff] ^ (crc >> 8).
    (block $bytes_done
      (loop $bytes
        (br_if $bytes_done (i32.eqz (local.get $len)))
        (local.set $crc
          (i64.xor
            (i64.load offset=1024
              (i32.shl
                (i32.and (i32.wrap_i64 (i64.xor (local.get $crc) (i64.load8_u (local.get $ptr)))) (i32.const 255))
                (i32.const 3)))
            (i64.shr_u (local.get $crc) (i64.const 8))))
        (local.set $ptr (i32.add (local.get $ptr) (i32.const 1)))
        (local.set $len (i32.sub (local.get $len) (i32.const 1)))
        (br $bytes)))

    (i64.store (i32.const 0) (local.get $crc)))
)
