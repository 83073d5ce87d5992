; Pooling: average pooling is linear; max pooling commutes with relu (both monotone, and
; padding never wins a max).
(assert (! (forall ((k Int) (s Int) (p Int) (x T) (y T))
  (= (poolavg k s p (ewadd x y)) (ewadd (poolavg k s p x) (poolavg k s p y)))) :named poolavg_linear))
(assert (! (forall ((k Int) (s Int) (p Int) (x T) (w T))
  (= (smul (poolavg k s p x) w) (poolavg k s p (smul x w)))) :named poolavg_smul))
(assert (! (forall ((k Int) (s Int) (p Int) (x T))
  (= (relu (poolmax k s p x)) (poolmax k s p (relu x)))) :named poolmax_relu))
