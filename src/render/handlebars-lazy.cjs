// Stands in for the `handlebars` package in the CLI bundle (scripts/build.mjs aliases it; the TypeScript
// sources and tests use the real package). It is the Handlebars runtime, which is all a precompiled template
// needs, plus `compile`/`precompile`, which load the compiler on first use. Built-in templates ship
// precompiled (scripts/gen-templates.mjs), so a CLI run never initialises the compiler (its parser tables,
// code generator and source-map support); only a template that is not precompiled does.
//
// Environments behave as `Handlebars.create()` ones: `compile` attaches what Handlebars' own create() adds
// (AST, Compiler, JavaScriptCompiler, Parser, parse, parseWithoutProcessing) and then compiles the same way.
// esbuild bundles the compiler modules too, but a bundled CommonJS module only runs when first required.
'use strict';
const runtime = require('handlebars/runtime');

/** Gives `hb` the compiler members of a full Handlebars environment (once) and returns the compiler module. */
function withCompiler(hb) {
  const compiler = require('handlebars/dist/cjs/handlebars/compiler/compiler');
  if (hb.Compiler === undefined) {
    const base = require('handlebars/dist/cjs/handlebars/compiler/base');
    hb.AST = require('handlebars/dist/cjs/handlebars/compiler/ast');
    hb.Compiler = compiler.Compiler;
    hb.JavaScriptCompiler = require('handlebars/dist/cjs/handlebars/compiler/javascript-compiler');
    hb.Parser = base.parser;
    hb.parse = base.parse;
    hb.parseWithoutProcessing = base.parseWithoutProcessing;
  }
  return compiler;
}

/** `Handlebars.create()`: an isolated environment whose compiler is loaded on first use. */
function create() {
  const hb = runtime.create();
  hb.compile = (input, options) => withCompiler(hb).compile(input, options, hb);
  hb.precompile = (input, options) => withCompiler(hb).precompile(input, options, hb);
  return hb;
}

const inst = create();
inst.create = create;
inst.default = inst;
module.exports = inst;
