// Type-checks a TypeScript source held in memory (beside real files it may import), for tests that
// assert what compiles and what does not. In process and with only the ES lib: a second or two.
import ts from "typescript";

export type Diagnostic = { line: number; code: number; message: string };

/** The errors of `source`, as if it were the file `fileName`; lines are 1-based. */
export function typeErrors(fileName: string, source: string): Diagnostic[] {
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    allowImportingTsExtensions: true,
    lib: ["lib.es2022.d.ts"],
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const base = { getSourceFile: host.getSourceFile, readFile: host.readFile, fileExists: host.fileExists };
  host.getSourceFile = (name, version, ...rest) => (name === fileName ? ts.createSourceFile(name, source, version) : base.getSourceFile(name, version, ...rest));
  host.readFile = (name) => (name === fileName ? source : base.readFile(name));
  host.fileExists = (name) => name === fileName || base.fileExists(name);
  const program = ts.createProgram({ rootNames: [fileName], options, host });
  const file = program.getSourceFile(fileName)!;
  return ts.getPreEmitDiagnostics(program).map((d) => {
    if (d.file && d.file !== file) throw new Error(`an error outside the checked source, in ${d.file.fileName}: ${ts.flattenDiagnosticMessageText(d.messageText, " ")}`);
    const line = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : 0;
    return { line, code: d.code, message: ts.flattenDiagnosticMessageText(d.messageText, " ") };
  });
}

