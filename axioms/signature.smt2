; The vocabulary the axioms and the encoded rules share. Tensors are an uninterpreted
; sort; operator parameters are integers. Each operator of the library that taso-gen uses
; is one function (see verifier/encode.cc for the mapping).
; A tensor of sort T carries its concatenation history (TASO's split trees: where split0
; and split1 cut it), so two terms are equal only where both values and histories are;
; `value` forgets the history. A rule equates its outputs' values.
(declare-sort T 0)
(declare-sort Value 0)
(declare-fun value (T) Value)           ; the tensor's values, its history forgotten
(declare-fun vconcat (Int Value Value) Value) ; Concat of values: axis, first, second
(declare-fun ewadd (T T) T)             ; Add
(declare-fun ewmul (T T) T)             ; Mul
(declare-fun smul (T T) T)              ; ScalarMul: tensor, scalar
(declare-fun relu (T) T)                ; Relu
(declare-fun transpose (T) T)           ; Transpose of a matrix
(declare-fun matmul (T T) T)            ; MatMul
(declare-fun gemm (Int T T T) T)        ; Gemm: B transposed (0 or 1), A, B, bias C
(declare-fun concat (Int T T) T)        ; Concat: axis, first, second
(declare-fun split0 (Int T) T)          ; Split at the last concatenation along the axis:
(declare-fun split1 (Int T) T)          ;   the first and the second part
(declare-fun conv (Int Int Int T T) T)  ; dense Conv2D: stride, padding, activation, input, kernel
(declare-fun dconv (Int Int Int T T) T) ; depthwise Conv2D: the same
(declare-fun gconv (Int Int Int T T) T) ; grouped Conv2D (groups from the shapes): the same
(declare-fun mergegroups (Int T T) T)   ; MergeGroups: factor, kernel, input giving the channels
(declare-fun blockdiag (T T) T)         ; BlockDiag: two matrices on a diagonal, zeros elsewhere
(declare-fun poolmax (Int Int Int T) T) ; MaxPool: kernel size, stride, padding, input
(declare-fun poolavg (Int Int Int T) T) ; AveragePool (padding counted): the same
(declare-fun enlarge (T T) T)           ; Enlarge: kernel, kernel whose size it takes
(declare-fun cpool (Int T) T)           ; C_pool: kernel size, shape source
(declare-fun iconv (Int T) T)           ; I_conv: kernel size, shape source
(declare-fun imatmul (T) T)             ; I_matmul: shape source
(declare-fun iewmul (T) T)              ; I_ewmul: shape source
(define-fun SAME () Int 0)              ; padding modes
(define-fun VALID () Int 1)
(define-fun NONE () Int 0)              ; activations
(define-fun RELU () Int 1)
