// RUN: gnn-opt %s -split-input-file --convert-gnn-to-runtime -verify-diagnostics

// expected-error @+1 {{expects @gnn_train_step and @gnn_eval; run --gnn-autodiff first}}
module {
}
