export declare function samplesDir(from?: string): string
export declare function sampleTexts(dir?: string): string[]
