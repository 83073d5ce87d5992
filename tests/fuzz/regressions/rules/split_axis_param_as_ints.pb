tformat_version: 1
max_ops: 3
rules {
  name: "r2938"
  inputs {
    name: "X"
    example_shape: 1
    example_shape: 4
    example_shape: 5
    example_shape: 5
  }
  inputs {
    name: "Y"
    example_shape: 1
    example_shape: 4
    example_shape: 5
    example_shape: 5
  }
  source {
    ops {
      op: "Concat"
      params {
        name: "axis"
        int_value: 0
      }
      inputs: 0
      inputs: 0
      num_outputs: 1
    }
    ops {
      op: "Concat"
      params {
        name: "axis"
        int_value: 0
      }
      inputs: 1
      inputs: 2
      num_outputs: 1
    }
    ops {
      op: "Split"
      params {
        name: "axis"
        int_value: 0
      }
      params {
        name: "sizes"
        sizes {
          sizes {
            terms {
            }
          }
          sizes {
            terms {
              tensor: 1
            }
          }
        }
      }
      inputs: 2
      num_outputs: 2
    }
    outputs: 3
    outputs: 4
    outputs: 5
  }
  target {
    ops {
      op: "Concat"
      params {
        name: "axis"
        int_value: 0
      }
      inputs: 1
      inputs: 0
      num_outputs: 1
    }
    ops {
      op: "Concat"
      params {
        name: "axis"
        int_value: 0
      }
      inputs: 2
      inputs: 1
      num_outputs: 1
    }
    ops {
      op: "Split"
      params {
        name: "axis"
   sizes {
          sizes {
            terms {
              tensor: 2
            }
          }
          sizes {
            terms {
            }
          }
        }
      }
      inputs: 2
      num_outputs: 2
    }
    outputs: 3
    outputs: 5
    outputs: 4
  }
}
