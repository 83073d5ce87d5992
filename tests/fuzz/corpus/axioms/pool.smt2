; Pooling: average pooling is linear; max pooling commutes with relu (both monotone, and
; padding never wins a max).
(assert (! (forall ((k Int) (s Int) (p Int) (x T) (y T))
  (= (poolavg k s p (ewadd x y)) (ewadd (poolavg k s p x) (poolavg k s p y)))) :named poolavg_linear))
(assert (! (forall ((k Int) (s Int) (p Int) (x T) (w T))
  (= (smul (poolavg k s p x) w) (poolavg k s p (smul x w)))) :named poolavg_smul))
(assert (! (forall ((k Int) (s Int) (p Int) (x T))
  (= (relu (poolmax k s p x)) (poolmax k s p (relu x)))) :named poolmax_relu))
; Two max poolings of one odd kernel, stride 1 then s: same-then-valid padding covers
; the same windows as valid-then-same.
(assert (! (forall ((k Int) (s Int) (x T))
  (= (poolmax k s VALID (poolmax k 1 SAME x)) (poolmax k s SAME (poolmax k 1 VALID x)))) :named poolmax_same_valid))
; Average pooling and convolution commute (both sums over shifted windows), unpadded.
(assert (! (forall ((k Int) (s Int) (x T) (w T))
  (= (conv s VALID NONE (poolavg k 1 VALID x) w) (poolavg k s VALID (conv 1 VALID NONE x w)))) :named conv_poolavg))
